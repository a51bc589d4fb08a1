package server

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"dsearch/searchd"
	"dsearch/shared/api"
	"dsearch/shared/spoolforget"
)

// What a batch POSTed here removes (its deletions, its deleted channels
// with their threads, the servers the bot left, the older copies of a
// message it edits) leaves the batches searchd refused from the bot
// (BotSpool's rejected/) too, whoever sent it: the bot cleans them for
// what it sends itself (bot/removal.go), but not for curl, a script or
// another process, and their text would stay on disk for a person.
//
// The bot's replay holds rejected/'s lock while it posts a batch and
// waits for the response, and a replayed batch may delete: waiting for
// the lock inside the request would wait on the replay waiting on the
// request. So the cleaning runs in the request when the lock is free,
// and otherwise after it (rejectedCleaner), once the replay let go; serve
// waits for it before it exits. A replay meanwhile cannot store what the
// batch removed: deletions and deleted channels leave tombstones, and
// searchd keeps a message's newest edit.

// removed is what one or more batches took away, as the bot's removal
// reads it (bot/removal.go's drops).
type removed struct {
	messages, channels, guilds map[api.ID]bool
	edits                      map[api.ID]time.Time
}

// removedBy is what in, taken with result res, removed; forgot are the
// channels it forgot with the threads searchd holds of them.
func removedBy(in *api.MessageBatch, res *searchd.BatchResult, forgot []api.ID) *removed {
	r := &removed{messages: map[api.ID]bool{}, channels: map[api.ID]bool{}, guilds: map[api.ID]bool{}, edits: map[api.ID]time.Time{}}
	for _, l := range []struct {
		ids []api.ID
		to  map[api.ID]bool
	}{{in.Deletes, r.messages}, {in.ForgetChannels, r.channels}, {forgot, r.channels}, {in.ForgetGuilds, r.guilds}} {
		for _, id := range l.ids {
			l.to[id] = true
		}
	}
	for _, c := range in.Channels { // threads the batch itself places
		if c.ParentID != 0 && r.channels[c.ParentID] && strings.HasSuffix(c.Kind, "Thread") {
			r.channels[c.ID] = true
		}
	}
	updated := map[int64]bool{}
	for _, id := range res.UpdatedIDs {
		updated[id] = true
	}
	for _, m := range in.Messages {
		// An edit searchd took: updated, or stored anew (the result does
		// not say which it inserted; a refused copy is its first).
		if m.EditedAt != nil && !m.Partial && (updated[int64(m.ID)] || res.Inserted > 0) {
			r.edits[m.ID] = *m.EditedAt
		}
	}
	return r
}

func (r *removed) empty() bool {
	return len(r.messages)+len(r.channels)+len(r.guilds)+len(r.edits) == 0
}

// drops is spoolforget.Gone for what r removed: a message, or a place
// (no ID) of a removed channel or server.
func (r *removed) drops(m api.MessageUpsert, parent api.ID) bool {
	if r.messages[m.ID] || r.channels[m.ChannelID] || r.channels[parent] || r.guilds[m.GuildID] {
		return true
	}
	t, ok := r.edits[m.ID]
	return ok && (m.EditedAt == nil || !m.EditedAt.After(t))
}

// add merges o into r.
func (r *removed) add(o *removed) {
	for _, p := range []struct{ to, from map[api.ID]bool }{{r.messages, o.messages}, {r.channels, o.channels}, {r.guilds, o.guilds}} {
		for id := range p.from {
			p.to[id] = true
		}
	}
	for id, t := range o.edits {
		if t.After(r.edits[id]) {
			r.edits[id] = t
		}
	}
}

// rejectedCleaner holds the cleanings that found rejected/'s lock taken,
// merged, for one goroutine that waits for the lock.
type rejectedCleaner struct {
	mu      sync.Mutex
	pending *removed
	busy    bool // the goroutine runs
	running sync.WaitGroup
}

// forgetRejected takes what r removed out of the bot's refused batches:
// now if their lock is free, after the lock's holder let go otherwise.
func (s *Server) forgetRejected(r *removed) {
	if s.BotSpool == "" || r.empty() {
		return
	}
	took, done, err := spoolforget.TryRejected(s.BotSpool, r.drops)
	s.logRejectedCleaning(took, err)
	if done {
		return
	}
	c := &s.rejected
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = r
	} else {
		c.pending.add(r)
	}
	if c.busy {
		return
	}
	c.busy = true
	c.running.Add(1)
	go func() {
		defer c.running.Done()
		for {
			c.mu.Lock()
			r := c.pending
			c.pending = nil
			c.busy = r != nil
			c.mu.Unlock()
			if r == nil {
				return
			}
			took, err := spoolforget.Rejected(s.BotSpool, r.drops)
			s.logRejectedCleaning(took, err)
		}
	}()
}

func (s *Server) logRejectedCleaning(took int, err error) {
	if err != nil {
		s.Log.Error("removed messages could not all be taken out of the bot's refused batches: delete them, or replay them", "dir", filepath.Join(s.BotSpool, "rejected"), "err", err)
	} else if took > 0 {
		s.Log.Info("removed messages taken out of the bot's refused batches", "messages", took)
	}
}

// waitRejected waits, until ctx is done, for the cleanings left for
// after their requests.
func (s *Server) waitRejected(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.rejected.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.Log.Warn("shutdown: the bot's refused batches are still locked; removed messages may stay in them (replay them, or delete them)", "dir", filepath.Join(s.BotSpool, "rejected"))
	}
}
