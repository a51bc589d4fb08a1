package bot

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"dsearch/bot/spool"
	"dsearch/shared/api"
)

// batcher gathers live events into small batches and hands them to the
// spool: one every flushEvery, or sooner when maxItems are waiting.
type batcher struct {
	spool      *spool.Spool
	log        *slog.Logger
	maxItems   int
	flushEvery time.Duration
	// overflow is told when the spool was full and events were dropped,
	// so a catch-up pass can fetch them again from Discord.
	overflow chan<- struct{}

	mu      sync.Mutex
	pending api.MessageBatch
	at      map[api.ID]int // message ID → index in pending.Messages
	dropped int
}

func (b *batcher) items() int {
	p := &b.pending
	return len(p.Guilds) + len(p.Channels) + len(p.Messages) + len(p.Deletes)
}

// message adds a new or edited message; a second version of one already
// waiting replaces it (searchd refuses a batch naming a message twice).
func (b *batcher) message(u api.MessageUpsert) {
	b.mu.Lock()
	if i, ok := b.at[u.ID]; ok {
		b.pending.Messages[i] = u
	} else {
		if b.at == nil {
			b.at = map[api.ID]int{}
		}
		b.at[u.ID] = len(b.pending.Messages)
		b.pending.Messages = append(b.pending.Messages, u)
	}
	b.mu.Unlock()
	b.flushIfFull()
}

func (b *batcher) deletes(ids ...api.ID) {
	b.mu.Lock()
	for _, id := range ids {
		if !slices.Contains(b.pending.Deletes, id) {
			b.pending.Deletes = append(b.pending.Deletes, id)
		}
	}
	b.mu.Unlock()
	b.flushIfFull()
}

func (b *batcher) places(guilds []api.Guild, channels []api.Channel) {
	b.mu.Lock()
	b.pending.Guilds = append(b.pending.Guilds, guilds...)
	b.pending.Channels = append(b.pending.Channels, channels...)
	b.mu.Unlock()
	b.flushIfFull()
}

func (b *batcher) flushIfFull() {
	b.mu.Lock()
	full := b.items() >= b.maxItems
	b.mu.Unlock()
	if full {
		b.flush()
	}
}

// flush writes what is waiting to the spool, in pieces searchd accepts.
func (b *batcher) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.items() == 0 {
		return
	}
	for _, part := range split(&b.pending, api.MaxBatchItems) {
		err := b.spool.Put(part)
		switch {
		case errors.Is(err, spool.ErrFull):
			b.dropped += len(part.Messages) + len(part.Deletes)
			b.log.Warn("spool full while searchd is away; events dropped until a catch-up fetches them again",
				"dropped", b.dropped)
			select {
			case b.overflow <- struct{}{}:
			default:
			}
		case err != nil:
			b.log.Error("cannot write to the spool; events dropped", "err", err)
		}
	}
	b.pending, b.at = api.MessageBatch{}, nil
}

// run flushes on a timer until ctx ends, then once more.
func (b *batcher) run(ctx context.Context) {
	t := time.NewTicker(b.flushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			b.flush()
			return
		case <-t.C:
			b.flush()
		}
	}
}

// split cuts a batch into batches of at most n items, in the order
// searchd applies them: places, messages, deletions.
func split(b *api.MessageBatch, n int) []*api.MessageBatch {
	out := []*api.MessageBatch{{}}
	count := 0
	next := func() *api.MessageBatch { // the batch with room for one more
		if count == n {
			out, count = append(out, &api.MessageBatch{}), 0
		}
		count++
		return out[len(out)-1]
	}
	for _, g := range b.Guilds {
		cur := next()
		cur.Guilds = append(cur.Guilds, g)
	}
	for _, c := range b.Channels {
		cur := next()
		cur.Channels = append(cur.Channels, c)
	}
	for _, m := range b.Messages {
		cur := next()
		cur.Messages = append(cur.Messages, m)
	}
	for _, d := range b.Deletes {
		cur := next()
		cur.Deletes = append(cur.Deletes, d)
	}
	if count == 0 {
		return nil
	}
	return out
}
