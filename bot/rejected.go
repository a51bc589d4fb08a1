package bot

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"

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
// member's at an opt-out, and stays: searchd skips it (its message is
// tombstoned).
func (r *removal) drops(m api.MessageUpsert, parent api.ID) bool {
	if r.messages[m.ID] || r.channels[m.ChannelID] || r.channels[parent] || r.guilds[m.GuildID] || r.authors[m.Author.ID] {
		return true
	}
	t, ok := r.edits[m.ID]
	return ok && (m.EditedAt == nil || !m.EditedAt.After(t))
}

// forgetRejected takes what r removed out of SPOOL/rejected/; nothing
// is read when it holds nothing (the usual case).
func (b *Bot) forgetRejected(r *removal) {
	if len(r.messages)+len(r.channels)+len(r.guilds)+len(r.authors)+len(r.edits) == 0 {
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

// forgetRejectedOptOuts takes out of SPOOL/rejected/ the messages of the
// members who opted out through searchd's socket (curl, a script): the
// bot hears of no such opt-out, and searchd cleans only the default
// spool (DATA/bot-spool). Asked with the answer check (at start, every
// few minutes): searchd says, per author the refused batches hold,
// whether they opted out. Nothing is read when rejected/ holds nothing
// (the usual case).
func (b *Bot) forgetRejectedOptOuts(ctx context.Context) error {
	if b.spool == nil { // --reconcile has no spool of its own
		return nil
	}
	paths, err := spool.Rejected(b.cfg.SpoolDir)
	if err != nil || len(paths) == 0 {
		return err
	}
	authors := idSet{}
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
		for _, m := range mb.Messages {
			if m.Author.ID != 0 {
				authors[m.Author.ID] = true
			}
		}
	}
	out := idSet{}
	for a := range authors {
		st, err := b.searchd.OptOutStatus(ctx, a)
		if err != nil {
			return err
		}
		if st.OptedOut {
			out[a] = true
		}
	}
	if len(out) > 0 {
		b.forgetRejected(&removal{authors: out})
	}
	return nil
}
