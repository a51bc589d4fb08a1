package bot

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"slices"
	"time"

	"dsearch/bot/spool"
	"dsearch/shared/api"
)

// Batches searchd refused wait in SPOOL/rejected/ for a person and
// --replay-rejected. What Discord removes meanwhile, or a member's
// opt-out, must not wait there with them: once searchd has taken a
// removal, it is taken out of those files too (Bot.took).

// drops reports whether m, in a batch that places its channel as a
// thread of parent (0: not a thread there), was removed. A partial
// update that does not name its author is not told apart from another
// member's at an opt-out: it goes once searchd says its message is
// deleted (forgetRejectedGone, asked at once after the bot's /optout).
func (r *removal) drops(m api.MessageUpsert, parent api.ID) bool {
	if r.messages[m.ID] || r.channels[m.ChannelID] || r.channels[parent] || r.guilds[m.GuildID] || r.authors[m.Author.ID] {
		return true
	}
	if t, ok := r.forgotten[m.Author.ID]; ok && m.ID != 0 && !m.CreatedAt.After(t) {
		return true
	}
	if t, ok := r.newer[m.ID]; ok && !m.Partial && (m.EditedAt == nil || !m.EditedAt.After(t)) {
		return true
	}
	t, ok := r.edits[m.ID]
	return ok && (m.EditedAt == nil || !m.EditedAt.After(t))
}

// forgetRejected takes what r removed out of SPOOL/rejected/; nothing
// is read when it holds nothing (the usual case).
func (b *Bot) forgetRejected(r *removal) {
	if len(r.messages)+len(r.channels)+len(r.guilds)+len(r.authors)+len(r.edits)+len(r.forgotten)+len(r.newer) == 0 {
		return
	}
	if rej, err := spool.Rejected(b.cfg.SpoolDir); err == nil && len(rej) == 0 {
		return
	}
	n, err := spool.Forget(b.cfg.SpoolDir, r.drops)
	if err != nil {
		b.log.Error("the spool's rejected batches could not all be cleaned of removed messages; delete SPOOL/rejected or replay it", "err", err)
	} else if n > 0 {
		b.log.Info("removed messages taken out of rejected batches", "messages", n)
	}
}

// forgetRejectedGone takes out of SPOOL/rejected/ what searchd removed
// without the bot: the members who opted out through searchd's socket
// (curl, a script), the messages a batch another client posted deleted
// (a tombstone), the channels it forgot, the older copies of a message it
// edited, the authors searchd forget --author forgot (their messages
// written before). The bot hears of none of those, and searchd cleans
// only the default spool (DATA/bot-spool) itself. Asked with the answer
// check (at start, every few minutes), by ID: whatever searchd says is
// removed would be skipped at a replay, or was forgotten on purpose.
// Nothing is read when rejected/ holds nothing (the usual case).
func (b *Bot) forgetRejectedGone(ctx context.Context) error {
	if b.spool == nil { // --reconcile has no spool of its own
		return nil
	}
	paths, err := spool.Rejected(b.cfg.SpoolDir)
	if err != nil || len(paths) == 0 {
		return err
	}
	authors, msgs, chans := idSet{}, idSet{}, idSet{}
	var versions []api.Version
	edits := map[api.ID]time.Time{} // each message's newest refused edit
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // replayed meanwhile
		}
		if err != nil {
			return err
		}
		var mb api.MessageBatch
		if json.Unmarshal(data, &mb) != nil {
			continue // unreadable: searchd refuses it whole; a person looks at it
		}
		for _, c := range mb.Channels {
			chans[c.ID] = true
			if c.ParentID != 0 {
				chans[c.ParentID] = true
			}
		}
		for _, m := range mb.Messages {
			if m.Author.ID != 0 {
				authors[m.Author.ID] = true
			}
			chans[m.ChannelID] = true
			msgs[m.ID] = true
			if !m.Partial { // a link preview's update has no edit time to compare
				v := api.Version{ID: m.ID}
				if m.EditedAt != nil {
					v.EditedAt = *m.EditedAt
					if m.EditedAt.After(edits[m.ID]) {
						edits[m.ID] = *m.EditedAt
					}
				}
				versions = append(versions, v)
			}
		}
	}
	gone := &removal{messages: idSet{}, channels: idSet{}, authors: idSet{}, newer: map[api.ID]time.Time{}, forgotten: map[api.ID]time.Time{}}
	for a := range authors {
		st, err := b.searchd.OptOutStatus(ctx, a)
		if err != nil {
			return err
		}
		if st.OptedOut {
			gone.authors[a] = true
		}
	}
	req := &api.GoneRequest{Deleted: slices.Collect(maps.Keys(msgs)), Channels: slices.Collect(maps.Keys(chans)),
		Quoted: versions, Forgotten: slices.Collect(maps.Keys(authors))}
	for req.IDs() > 0 {
		part, room := &api.GoneRequest{}, api.MaxGoneIDs
		for _, k := range []struct{ from, to *[]api.ID }{{&req.Deleted, &part.Deleted}, {&req.Channels, &part.Channels}, {&req.Forgotten, &part.Forgotten}} {
			n := min(room, len(*k.from))
			*k.to, *k.from, room = (*k.from)[:n], (*k.from)[n:], room-n
		}
		n := min(room, len(req.Quoted))
		part.Quoted, req.Quoted = req.Quoted[:n], req.Quoted[n:]
		res, err := b.searchd.Gone(ctx, part)
		if err != nil {
			// What was learnt still goes: a searchd older than the bot
			// refuses deleted and forgotten, not the opt-outs.
			b.forgetRejected(gone)
			return err
		}
		for _, id := range res.Deleted {
			gone.messages[id] = true
		}
		for _, id := range res.Channels {
			gone.channels[id] = true
		}
		for _, v := range res.Edited {
			gone.newer[v.ID] = v.EditedAt // the stored edit's, the same for every copy
		}
		for _, v := range res.Forgotten {
			gone.forgotten[v.ID] = v.EditedAt
		}
	}
	b.forgetRejected(gone)
	return b.dropOutdated(ctx, edits, gone)
}

// dropOutdated asks searchd to drop each message it holds in a version
// older than an edit kept in SPOOL/rejected/ (POST /v1/outdated): the
// member edited that text away, and it would stay served until a person
// replays the edit. searchd leaves no tombstone, so the replay stores
// the edit. The answers quoting a message dropped are withdrawn. gone is
// what was just taken out of rejected/ (an edit older than the stored
// version, or removed).
func (b *Bot) dropOutdated(ctx context.Context, edits map[api.ID]time.Time, gone *removal) error {
	var req api.OutdatedRequest
	for id, at := range edits {
		if t, ok := gone.newer[id]; ok && !at.After(t) || gone.messages[id] {
			continue
		}
		req.Messages = append(req.Messages, api.Version{ID: id, EditedAt: at})
	}
	for len(req.Messages) > 0 {
		n := min(len(req.Messages), api.MaxGoneIDs)
		res, err := b.searchd.Outdated(ctx, &api.OutdatedRequest{Messages: req.Messages[:n]})
		if err != nil {
			return err
		}
		req.Messages = req.Messages[n:]
		if len(res.Dropped) > 0 && b.answers != nil {
			b.answers.remove(&removal{changed: setOf(res.Dropped)})
		}
	}
	return nil
}
