package index

import (
	"context"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// Keywords.Run, the same loop as Memberships.Run (follower): it loads the
// index, follows the text log and trims all it has applied.
func TestKeywordsRunTrimsTheLog(t *testing.T) {
	db := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	k := &Keywords{DB: db}
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx, 5*time.Millisecond) }()
	if _, err := db.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{
		msg(60, 50*time.Hour, "one more"), msg(61, 50*time.Hour+time.Minute, "and another"),
	}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	st, err := db.TextState(ctx)
	if err != nil || st.Seq == 0 {
		t.Fatalf("the batch logged no text change: %+v, %v", st, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		changed, deleted, _, err := db.TextChanges(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(changed)+len(deleted) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log still holds %d changes", len(changed)+len(deleted))
		}
		time.Sleep(5 * time.Millisecond)
	}
	idx, err := k.Current(ctx)
	if err != nil || idx == nil {
		t.Fatalf("not current after the trim: %v", err)
	}
	if n, stored := idx.Len(), 6+2; n != stored {
		t.Errorf("the index holds %d messages, %d stored", n, stored)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
