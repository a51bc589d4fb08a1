package bot

import (
	"time"

	"dsearch/bot/spool"
	"dsearch/shared/api"
)

// Batches searchd refused wait in SPOOL/rejected/ for a person and
// --replay-rejected. What Discord removes meanwhile must not wait there
// with them: once searchd has taken a removal, it is taken out of those
// files too (spool.Forget), as /optout does for its member. Not before:
// a batch spooled ahead of the removal may still be refused and join
// them.

// removal is what a batch searchd took removed.
type removal struct {
	messages, channels, guilds map[api.ID]bool
	// edited holds the edit time of each full edit taken: an older copy
	// is of no use to a replay (searchd keeps the newest) and may hold
	// text the edit took out.
	edited map[api.ID]time.Time
}

// removalOf is what mb removes, or nil when nothing is to be taken out
// of rejected/ (nothing there, the usual case, or nothing removed). Call
// it before mb is sent: a forgotten channel's threads are looked up in
// the gateway's state, where they stay (Discord sends no event for them).
func (b *Bot) removalOf(mb *api.MessageBatch) *removal {
	if rej, err := spool.Rejected(b.cfg.SpoolDir); err == nil && len(rej) == 0 {
		return nil
	}
	r := &removal{messages: map[api.ID]bool{}, channels: map[api.ID]bool{}, guilds: map[api.ID]bool{}, edited: map[api.ID]time.Time{}}
	for _, id := range mb.Deletes {
		r.messages[id] = true
	}
	for _, id := range mb.ForgetChannels {
		r.channels[id] = true
	}
	for _, id := range mb.ForgetGuilds {
		r.guilds[id] = true
	}
	for _, m := range mb.Messages {
		if m.EditedAt != nil && !m.Partial {
			r.edited[m.ID] = *m.EditedAt
		}
	}
	if len(r.channels) > 0 {
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
	if len(r.messages)+len(r.channels)+len(r.guilds)+len(r.edited) == 0 {
		return nil
	}
	return r
}

// drops reports whether m, in a batch that places its channel as a
// thread of parent (0: not a thread there), was removed.
func (r *removal) drops(m api.MessageUpsert, parent api.ID) bool {
	if r.messages[m.ID] || r.channels[m.ChannelID] || r.channels[parent] || r.guilds[m.GuildID] {
		return true
	}
	t, ok := r.edited[m.ID]
	return ok && (m.EditedAt == nil || !m.EditedAt.After(t))
}

// forgetRejected takes what r removed out of SPOOL/rejected/.
func (b *Bot) forgetRejected(r *removal) {
	if r == nil {
		return
	}
	n, err := spool.Forget(b.cfg.SpoolDir, r.drops)
	if err != nil {
		b.log.Error("the spool's rejected batches could not all be cleaned of removed messages; delete SPOOL/rejected or replay it", "err", err)
	} else if n > 0 {
		b.log.Info("removed messages taken out of rejected batches", "messages", n)
	}
}

// postRemoving sends mb with send and, once searchd took it, takes what
// it removed out of SPOOL/rejected/, with every thread of a forgotten
// channel searchd knows (an archived one is not in the gateway's state).
func (b *Bot) postRemoving(mb *api.MessageBatch, send func(*api.MessageBatch) (*api.BatchResult, error)) error {
	r := b.removalOf(mb)
	res, err := send(mb)
	if err != nil {
		return err
	}
	if r != nil && res != nil {
		for _, c := range res.ForgotChannels {
			r.channels[c] = true
		}
	}
	b.forgetRejected(r)
	return nil
}
