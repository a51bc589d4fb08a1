package index

import (
	"context"
	"errors"
	"testing"
	"time"

	"dsearch/searchd/sqlite"
)

// blockingEmbedder holds its first call until release is closed or the
// call's context ends.
type blockingEmbedder struct {
	fakeEmbedder
	started, release chan struct{}
}

func (b *blockingEmbedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-b.started:
	default:
		close(b.started)
		select {
		case <-b.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return b.fakeEmbedder.EmbedPassages(ctx, texts)
}

// A batch that takes longer than the lease lasts keeps the lease (a
// hand-over of 128 segments on the pure-Go backend takes minutes), and a
// job that loses it mid-batch stops and names the new holder.
func TestJobKeepsTheLeaseThroughALongBatch(t *testing.T) {
	db := setup(t)
	ctx := context.Background()
	e := &blockingEmbedder{fakeEmbedder: fakeEmbedder{name: "fake"}, started: make(chan struct{}), release: make(chan struct{})}
	j := newJob(db, e)
	j.Lease, j.leaseTTL = "searchd embed (pid 1)", time.Second
	done := make(chan error, 1)
	go func() { done <- j.RunOnce(ctx) }()
	<-e.started
	time.Sleep(3 * j.leaseTTL) // the lease would have lapsed twice over
	if held, err := db.AcquireLease(ctx, sqlite.LeaseEmbedding, "searchd serve (pid 2)", leaseTTL); err != nil || held == nil || held.Owner != j.Lease {
		t.Fatalf("another process got the lease while the job's batch ran (held by %+v, %v)", held, err)
	}
	// Taken from it all the same (it lapsed: a suspended process, say).
	// The job renews every fifth of its TTL and may take it back between
	// the release and the taking: try again then.
	for try := 0; ; try++ {
		if err := db.ReleaseLease(ctx, sqlite.LeaseEmbedding, j.Lease); err != nil {
			t.Fatal(err)
		}
		held, err := db.AcquireLease(ctx, sqlite.LeaseEmbedding, "searchd serve (pid 2)", leaseTTL)
		if err != nil || held != nil && try == 10 {
			t.Fatal(held, err)
		}
		if held == nil {
			break
		}
	}
	var busy *BusyError
	if err := <-done; !errors.As(err, &busy) || busy.Holder != "searchd serve (pid 2)" {
		t.Fatalf("RunOnce after losing the lease: %v, want the new holder named", err)
	}
}
