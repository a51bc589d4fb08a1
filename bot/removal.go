package bot

import (
	"context"
	"slices"
	"strings"
	"time"

	"dsearch/shared/api"
)

// What searchd takes away is kept elsewhere too: in the public answers
// quoting it (answers.go) and in the batches searchd refused, waiting in
// SPOOL/rejected/ (rejected.go). A removal is computed once, from a batch
// and searchd's result for it (or an opt-out), and given to both.

// removal is what searchd took away: a batch's deletions, forgotten
// channels and servers, and the messages whose text it changed, or a
// member's opt-out.
type removal struct {
	messages, channels, guilds, authors idSet
	// changed are the messages whose text searchd changed (its result's
	// updated_ids, link previews too): an answer showed the old text,
	// and an edit may take quoted text out.
	changed idSet
	// edits holds the edit time of each full edit among them: an older
	// rejected copy is of no use to a replay (searchd keeps the newest)
	// and may hold text the edit took out.
	edits map[api.ID]time.Time
	// forgotten are the authors searchd forget --author forgot, with
	// when: their messages written before leave SPOOL/rejected/
	// (forgetRejectedGone).
	forgotten map[api.ID]time.Time
	// newer holds, of the messages in SPOOL/rejected/, those searchd
	// holds edited later, with that time (forgetRejectedGone): a full
	// copy older is of no use to a replay and may hold text the edit
	// took out. A link preview's update (partial) has no time to compare
	// and stays.
	newer map[api.ID]time.Time
}

type idSet map[api.ID]bool

func setOf(ids ...[]api.ID) idSet {
	s := idSet{}
	for _, l := range ids {
		for _, id := range l {
			s[id] = true
		}
	}
	return s
}

// any reports whether one of ids is in s.
func (s idSet) any(ids []api.ID) bool {
	for _, id := range ids {
		if s[id] {
			return true
		}
	}
	return false
}

func (r *removal) empty() bool {
	return r == nil || len(r.messages)+len(r.channels)+len(r.guilds)+len(r.authors)+len(r.changed)+len(r.edits)+len(r.forgotten)+len(r.newer) == 0
}

// removalOf is what mb, taken by searchd with result res, removed: with
// every thread of a forgotten channel searchd knows (res) and the gateway
// state holds (an archived one is not in the state; a live one not yet
// in searchd). The state keeps a deleted channel's threads: Discord sends
// no event for them. res nil: mb is not taken yet (the waiting spool's
// cleaning, waiting.go), and every full edit in it counts.
func (b *Bot) removalOf(mb *api.MessageBatch, res *api.BatchResult) *removal {
	taken := res != nil
	if !taken {
		res = &api.BatchResult{}
	}
	r := &removal{messages: setOf(mb.Deletes), channels: setOf(mb.ForgetChannels, res.ForgotChannels),
		guilds: setOf(mb.ForgetGuilds), authors: idSet{}, changed: setOf(res.UpdatedIDs), edits: map[api.ID]time.Time{}}
	for _, m := range mb.Messages {
		// An edit searchd took (changed, or stored anew: its first copy
		// may be the rejected one; the result does not say which it
		// inserted). A page of history resending what searchd holds
		// changes nothing, and reads no rejected file.
		if m.EditedAt != nil && !m.Partial && (!taken || r.changed[m.ID] || res.Inserted > 0) {
			r.edits[m.ID] = *m.EditedAt
		}
	}
	if len(mb.ForgetChannels) > 0 {
		for _, c := range mb.Channels { // placed by the batch itself: maybe nowhere else (waiting.go)
			if c.ParentID != 0 && r.channels[c.ParentID] && strings.HasSuffix(c.Kind, "Thread") {
				r.channels[c.ID] = true
			}
		}
	}
	if len(mb.ForgetChannels) > 0 && b.state != nil {
		guilds, _ := b.state.Cabinet.Guilds()
		for _, g := range guilds {
			chans, _ := b.state.Cabinet.Channels(g.ID)
			for _, c := range chans {
				if isThread(c.Type) && r.channels[api.ID(c.ParentID)] {
					r.channels[api.ID(c.ID)] = true
				}
			}
		}
	}
	return r
}

// watched is searchd as the bot sees it: what a batch or an opt-out
// searchd took removes (removalOf) leaves the public answers quoting it
// and the rejected batches holding it (took). Every batch the bot sends
// passes here, the spool's, a catch-up's and a reconciliation's alike.
type watched struct {
	Searchd
	b *Bot
}

func (w watched) PostMessages(ctx context.Context, mb *api.MessageBatch) (*api.BatchResult, error) {
	for try := 1; ; try++ {
		// Naming the generation the marks hold for: searchd refuses a
		// batch naming another (a restore since, or between a check and
		// the post), storing nothing, and the check then takes the marks
		// back before the batch goes again. searchd is asked which it
		// serves (checkGeneration) only when the marks know none yet or
		// it refused: not once more for every batch.
		g := w.b.knownGeneration()
		if g == "" || try > 1 {
			var err error
			if g, err = w.b.checkGeneration(ctx); err != nil {
				return nil, err
			}
		}
		res, err := w.Searchd.PostMessagesIn(ctx, g, mb)
		if api.StaleGeneration(err) && try < maxGenerationTries {
			continue
		}
		if err == nil {
			w.b.taken.Add(1)
			w.b.took(w.b.removalOf(mb, res))
		}
		return res, err
	}
}

// maxGenerationTries bounds the checks and posts of one batch that
// restores keep coming between; past it the caller retries later, as
// after any error but a bad batch.
const maxGenerationTries = 3

func (w watched) OptOut(ctx context.Context, user api.ID) (*api.OptOut, error) {
	res, err := w.Searchd.OptOut(ctx, user)
	if err == nil {
		w.b.took(&removal{authors: setOf([]api.ID{user})})
		// A link preview's update in SPOOL/rejected/ names no author:
		// the check asks searchd whether its message is deleted now.
		w.b.answers.recheck()
	}
	return res, err
}

// took hands what searchd removed to what keeps copies of it. Not
// before searchd took it: a batch spooled ahead of the removal may
// still be refused and join SPOOL/rejected/.
func (b *Bot) took(r *removal) {
	if r.empty() {
		return
	}
	if b.answers != nil { // --reconcile runs without: the running bot's check finds it (answercheck.go)
		b.answers.remove(r)
	}
	b.forgetRejected(r)
	b.forgetWaitingAuthors(r)
	b.asideMu.Lock()
	if b.asideOpen > 0 {
		b.asideSeen = append(b.asideSeen, r)
	}
	b.asideMu.Unlock()
}

// watchRemovals is called as a refused batch starts to be split (a
// catch-up's page, postPage, or the spool's oldest batch): what searchd
// removes until the returned func is called is taken out of
// SPOOL/rejected/ again then, after the part searchd refused was written
// there (done(true); done(false): nothing was set aside). Its removal's
// own cleaning (took) may have come first.
func (b *Bot) watchRemovals() (done func(setAside bool)) {
	b.asideMu.Lock()
	b.asideOpen++
	from := len(b.asideSeen)
	b.asideMu.Unlock()
	return func(setAside bool) {
		b.asideMu.Lock()
		seen := slices.Clone(b.asideSeen[from:])
		if b.asideOpen--; b.asideOpen == 0 {
			b.asideSeen = nil
		}
		b.asideMu.Unlock()
		if !setAside {
			return
		}
		// An edit set aside leaves the older version served: the check
		// asks searchd to drop it (dropOutdated).
		b.answers.recheck()
		for _, r := range seen {
			b.forgetRejected(r)
		}
	}
}
