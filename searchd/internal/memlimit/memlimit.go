// Package memlimit keeps the Go heap's soft limit where it saves memory
// without making the collector run without pause.
package memlimit

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Follow sets the heap's soft limit to base, or to a quarter above the
// live heap when that is more, and follows the live heap until ctx is
// done. The collector lets the heap grow to twice what is live before it
// runs; near the limit it runs sooner instead, which at the blog's scale
// (about 200 MiB live at 650,000 messages) keeps a daemon near base. A
// limit under the live heap (859 MiB of keyword index alone at 6.5 M
// messages) would have it collect without pause, up to half the CPU:
// that is what the quarter above prevents.
func Follow(ctx context.Context, base int64, every time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		metrics.Read(sample)
		live := int64(0)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = int64(sample[0].Value.Uint64())
		}
		debug.SetMemoryLimit(Limit(base, live))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Limit is the soft limit for a live heap: base, or a quarter above live.
func Limit(base, live int64) int64 {
	return max(base, live+live/4)
}
