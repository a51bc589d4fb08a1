package index

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// follower is what Keywords and Memberships share: a copy of something
// the database holds (T), loaded whole, then brought forward by a log of
// changes; loaded again in the background when the log cannot be
// followed; the log trimmed up to what the copy applied.
type follower[T any] struct {
	ready     atomic.Pointer[T] // nil while it (re)loads
	reloading atomic.Bool
	mu        sync.Mutex // one catch-up at a time
}

// reload loads the copy again in the background, once at a time; f.mu is
// held. The old copy goes first, rather than two in memory while the new
// one loads (callers answer from SQLite meanwhile).
func (f *follower[T]) reload(load func(context.Context) error, log *slog.Logger, failed string) {
	if !f.reloading.CompareAndSwap(false, true) {
		return
	}
	f.ready.Store(nil)
	go func() {
		defer f.reloading.Store(false)
		if err := load(context.Background()); err != nil && log != nil {
			log.Error(failed, "err", err)
		}
	}()
}

// logFollower is how run drives a follower: Load, Current (true when the
// copy is current: not reloading, the database answered), the last log
// entry applied, and trimming the log to it.
type logFollower interface {
	Load(context.Context) error
	current(context.Context) bool
	applied() int64
	trim(context.Context, int64) error
}

// run loads the copy, then every interval brings it current and trims
// the log to what it applied, until ctx ends. Nothing new applied: no
// write to an idle database.
func run(ctx context.Context, f logFollower, interval time.Duration, log *slog.Logger, trimFailed string) error {
	if err := f.Load(ctx); err != nil {
		return err
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	trimmed := int64(-1)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if !f.current(ctx) {
			continue // reloading, or the database is busy: next time
		}
		seq := f.applied()
		if seq == trimmed {
			continue
		}
		if err := f.trim(ctx, seq); err != nil {
			if log != nil {
				log.Warn(trimFailed, "err", err)
			}
			continue
		}
		trimmed = seq
	}
}
