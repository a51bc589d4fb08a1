package bot

import (
	"context"
	"time"

	"dsearch/shared/api"
)

// What the bot hands searchd itself withdraws answers at once (Bot.took).
// Anything else may remove what an answer quotes: dsearch-bot
// --reconcile (another process), searchd forget, a PUT /v1/optouts on
// searchd's socket, and whatever way is added later. So the bot also asks
// searchd, by ID, which of the messages, authors and channels its
// answers quote are gone, and which messages it holds edited since they
// were quoted (POST /v1/gone), whoever removed or edited them: at start,
// after each catch-up, and every answerCheckEvery. The same check asks
// about the batches kept in SPOOL/rejected/, for what another client
// removed through searchd's socket (forgetRejectedGone).

// answerCheckEvery: one request of at most a few thousand IDs, a
// primary-key lookup each in searchd (2,000 answers of 35 messages at
// the very most: milliseconds), so a few minutes cost nothing, and an
// out-of-band removal (an operator's forget, a reconciliation run) is
// not left quoted for longer. The bot's own removals do not wait for it.
const answerCheckEvery = 5 * time.Minute

// checkAnswers asks searchd what the answers quote that it no longer
// holds, at start, every answerCheckEvery and when asked (recheck).
func (b *Bot) checkAnswers(ctx context.Context) {
	t := time.NewTicker(cmpOr(b.cfg.AnswerCheckEvery, answerCheckEvery))
	defer t.Stop()
	for {
		if err := b.answers.checkGone(ctx, b.searchd); err != nil && ctx.Err() == nil {
			b.log.Warn("cannot ask searchd whether public answers quote what it no longer holds; asked again later", "err", err)
		}
		if err := b.forgetRejectedGone(ctx); err != nil && ctx.Err() == nil {
			b.log.Warn("cannot ask searchd what of the spool's rejected batches it removed; asked again later", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-b.answers.check:
		}
	}
}

// recheck asks for a check soon (after a catch-up); one already asked
// for is enough.
func (s *answers) recheck() {
	if s == nil { // --reconcile keeps no answers
		return
	}
	select {
	case s.check <- struct{}{}:
	default:
	}
}

// checkGone marks for withdrawal each answer quoting a message, author or
// channel searchd says is gone, or a message it holds edited since the
// answer quoted it.
func (s *answers) checkGone(ctx context.Context, sd Searchd) error {
	var msgs, authors, chans []api.ID
	seen := idSet{}
	add := func(to *[]api.ID, ids []api.ID) {
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				*to = append(*to, id)
			}
		}
	}
	oldest := map[api.ID]time.Time{} // each message's oldest version quoted
	s.mu.Lock()
	for _, a := range s.list {
		if !a.Withdrawn && !a.Pending {
			add(&msgs, a.Messages)
			add(&authors, a.Authors)
			add(&chans, a.Channels)
			for _, m := range a.Messages {
				if v, ok := oldest[m]; !ok || a.version(m).Before(v) {
					oldest[m] = a.version(m)
				}
			}
		}
	}
	s.mu.Unlock()
	quoted := make([]api.Version, 0, len(oldest))
	for _, m := range msgs {
		quoted = append(quoted, api.Version{ID: m, EditedAt: oldest[m]})
	}
	gone := &removal{messages: idSet{}, authors: idSet{}, channels: idSet{}}
	edited := map[api.ID]time.Time{}
	for len(msgs)+len(authors)+len(chans)+len(quoted) > 0 {
		req, room := &api.GoneRequest{}, api.MaxGoneIDs
		for _, k := range []struct{ from, to *[]api.ID }{{&msgs, &req.Messages}, {&authors, &req.Authors}, {&chans, &req.Channels}} {
			n := min(room, len(*k.from))
			*k.to, *k.from, room = (*k.from)[:n], (*k.from)[n:], room-n
		}
		n := min(room, len(quoted))
		req.Quoted, quoted = quoted[:n], quoted[n:]
		res, err := sd.Gone(ctx, req)
		if err != nil {
			return err
		}
		for _, k := range []struct {
			ids []api.ID
			to  idSet
		}{{res.Messages, gone.messages}, {res.Authors, gone.authors}, {res.Channels, gone.channels}} {
			for _, id := range k.ids {
				k.to[id] = true
			}
		}
		for _, v := range res.Edited {
			edited[v.ID] = v.EditedAt
		}
	}
	if !gone.empty() {
		s.log.Info("public answers quote what searchd no longer holds (removed outside the bot); withdrawing them",
			"messages", len(gone.messages), "authors", len(gone.authors), "channels", len(gone.channels))
		s.remove(gone)
	}
	s.removeEdited(edited)
	return nil
}

// version is the edit time of message m as answer a quoted it.
func (a *answer) version(m api.ID) time.Time {
	if v, ok := a.Versions[m]; ok {
		return v
	}
	return a.At
}

// removeEdited marks for withdrawal each answer quoting an older version
// of a message than searchd holds (edited: its stored edit time): the
// edit, handed to searchd by another process, may take quoted text out.
func (s *answers) removeEdited(edited map[api.ID]time.Time) {
	if len(edited) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.list {
		if a.Withdrawn || a.Pending {
			continue
		}
		for _, m := range a.Messages {
			if t, ok := edited[m]; ok && t.After(a.version(m)) {
				a.Pending = true
				n++
				break
			}
		}
	}
	if n > 0 {
		s.log.Info("public answers quote messages edited since (outside the bot); withdrawing them", "answers", n)
		s.saveLogged()
		s.wake()
	}
}
