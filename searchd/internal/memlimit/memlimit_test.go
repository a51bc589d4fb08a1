package memlimit

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct{ base, live, want int64 }{
		{384 * mib, 200 * mib, 384 * mib},   // the blog's scale: base holds
		{384 * mib, 1300 * mib, 1625 * mib}, // 6.5 M messages: a quarter above live
	} {
		if got := Limit(tt.base, tt.live); got != tt.want {
			t.Errorf("Limit(%d, %d MiB) = %d MiB, want %d", tt.base/mib, tt.live/mib, got/mib, tt.want/mib)
		}
	}
}

// Follow raises the limit above a live heap larger than base.
func TestFollowRaisesTheLimitAboveTheLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	live := make([]byte, 64<<20) // live across the collection below
	runtime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Follow(ctx, 16<<20, time.Millisecond); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < 64<<20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if got := debug.SetMemoryLimit(-1); got < 64<<20+16<<20 {
		t.Errorf("limit %d MiB with 64 MiB live, want a quarter above it", got>>20)
	}
	runtime.KeepAlive(live)
}
