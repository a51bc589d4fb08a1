package spool

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"dsearch/shared/api"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func batch(id api.ID) *api.MessageBatch { return &api.MessageBatch{Deletes: []api.ID{id}} }

// recorder is a searchd that is down until told otherwise.
type recorder struct {
	mu   sync.Mutex
	up   bool
	got  []api.ID
	bad  api.ID // refused as a bad request
	done chan struct{}
	want int
}

func (r *recorder) send(_ context.Context, b *api.MessageBatch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.up {
		return errors.New("searchd is not reachable: connection refused")
	}
	if b.Deletes[0] == r.bad {
		return &api.Error{Status: 400, Message: "messages[0]: id is required"}
	}
	r.got = append(r.got, b.Deletes[0])
	if len(r.got) == r.want {
		close(r.done)
	}
	return nil
}

func TestOrderedReplayAfterOutageAndRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s, err := Open(dir, 1<<20, quiet)
	if err != nil {
		t.Fatal(err)
	}
	for id := api.ID(1); id <= 3; id++ {
		if err := s.Put(batch(id)); err != nil {
			t.Fatal(err)
		}
	}
	// searchd is down: a first run keeps everything.
	r := &recorder{done: make(chan struct{}), want: 5, bad: 4}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { s.Run(ctx, r.send); close(stopped) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	<-stopped
	if s.Len() != 3 {
		t.Fatalf("%d batches left after failures, want 3", s.Len())
	}
	// The bot restarts: a new spool over the same directory, more batches.
	s, err = Open(dir, 1<<20, quiet)
	if err != nil {
		t.Fatal(err)
	}
	for id := api.ID(4); id <= 6; id++ {
		if err := s.Put(batch(id)); err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	r.up = true
	r.mu.Unlock()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, r.send)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("delivered %v", r.got)
	}
	want := []api.ID{1, 2, 3, 5, 6}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) != len(want) {
		t.Fatalf("delivered %v, want %v", r.got, want)
	}
	for i := range want {
		if r.got[i] != want[i] {
			t.Fatalf("delivered %v, want %v in order", r.got, want)
		}
	}
	if rej, _ := os.ReadDir(filepath.Join(dir, "rejected")); len(rej) != 1 {
		t.Errorf("%d rejected files, want the refused batch kept", len(rej))
	}
}

func TestBound(t *testing.T) {
	s, err := Open(t.TempDir(), 100, quiet)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for ; n < 10; n++ {
		if err := s.Put(batch(api.ID(n + 1))); err != nil {
			if !errors.Is(err, ErrFull) {
				t.Fatal(err)
			}
			break
		}
	}
	if n == 0 || n == 10 || s.Size() > 100 {
		t.Errorf("stored %d batches, %d bytes, in a 100-byte spool", n, s.Size())
	}
}
