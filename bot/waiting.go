package bot

import (
	"slices"

	"dsearch/shared/api"
)

// While searchd is away the spool holds what members wrote. A removal
// (a deletion, a forgotten channel or server, a full edit) is spooled
// behind the copies it removes, and searchd would drop them when it took
// it; but their text would wait on disk for as long as searchd is away.
// So once the removal is stored, the batches waiting before it are
// rewritten without them (spool.ForgetWaiting), and the batch itself
// carries no message it deletes. An opt-out is no batch: it cleans the
// waiting batches once searchd took it (forgetWaitingAuthors, from took,
// the hook every removal passes).

// spoolPut is the batcher's put: the spool's, then the cleaning.
func (b *Bot) spoolPut(mb *api.MessageBatch) error {
	r := b.removalOf(mb, nil)
	if r.empty() {
		return b.spool.Put(mb)
	}
	// Of a message and its deletion in one batch, only the deletion;
	// not by an edit, whose own copy it is.
	within := *r
	within.edits = nil
	kept := make([]api.MessageUpsert, 0, len(mb.Messages))
	for _, m := range mb.Messages {
		if !within.drops(m, 0) {
			kept = append(kept, m)
		}
	}
	mb.Messages = kept
	// Nor the name of a channel or server it forgets.
	mb.Channels = slices.DeleteFunc(mb.Channels, func(c api.Channel) bool {
		return r.channels[c.ID] || r.guilds[c.GuildID]
	})
	mb.Guilds = slices.DeleteFunc(mb.Guilds, func(g api.Guild) bool { return r.guilds[g.ID] })
	seq, err := b.spool.PutSeq(mb)
	if err != nil {
		return err
	}
	n, err := b.spool.ForgetWaiting(seq, r.names(), r.drops)
	if err != nil {
		b.log.Error("the waiting spool could not all be cleaned of removed messages; searchd drops them when it is back", "err", err)
	} else if n > 0 {
		b.log.Info("removed messages taken out of the waiting spool", "messages", n)
	}
	return nil
}

// names are the IDs r drops by, for spool.ForgetWaiting.
func (r *removal) names() []api.ID {
	out := make([]api.ID, 0, len(r.messages)+len(r.channels)+len(r.guilds)+len(r.authors)+len(r.edits))
	for _, s := range []idSet{r.messages, r.channels, r.guilds, r.authors} {
		for id := range s {
			out = append(out, id)
		}
	}
	for id := range r.edits {
		out = append(out, id)
	}
	return out
}

// forgetWaitingAuthors takes an opt-out's members out of every batch
// waiting in the spool: searchd forgot them, and would leave their
// messages out when it takes those batches, but their text would wait on
// disk until then. Only authors: a batch's other removals were cleaned
// when it was spooled (spoolPut), and a batch posted straight to searchd
// (a catch-up page) follows a delivered spool (spooledFirst).
func (b *Bot) forgetWaitingAuthors(r *removal) {
	if len(r.authors) == 0 || b.spool == nil { // --reconcile has no spool of its own
		return
	}
	opt := &removal{authors: r.authors}
	n, err := b.spool.ForgetWaiting(b.spool.Last()+1, opt.names(), opt.drops)
	if err != nil {
		b.log.Error("the waiting spool could not all be cleaned of an opted-out member's messages; searchd leaves them out when it is back", "err", err)
	} else if n > 0 {
		b.log.Info("an opted-out member's messages taken out of the waiting spool", "messages", n)
	}
}
