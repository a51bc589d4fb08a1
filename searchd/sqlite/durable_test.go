package sqlite

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// What searchd acknowledges commits with synchronous=FULL (the WAL is
// synced before COMMIT returns, so a power cut keeps it): a batch of new
// messages, edits and deletions, a forget, a backfill checkpoint. Only an
// import's batches (which resume from their checkpoint) and recomputable
// data commit with NORMAL, and that never leaks into the next write on
// the same pooled connection.
func TestAcknowledgedWritesAreDurable(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	var levels []int
	beforeCommit = func(tx *sql.Tx) {
		var level int
		if err := tx.QueryRow(`PRAGMA synchronous`).Scan(&level); err != nil {
			t.Error(err)
		}
		levels = append(levels, level)
	}
	defer func() { beforeCommit = nil }()
	const normal, full = 1, 2
	expect := func(what string, want int, do func() error) {
		t.Helper()
		levels = nil
		if err := do(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(levels) == 0 {
			t.Fatalf("%s: no write transaction", what)
		}
		for _, l := range levels {
			if l != want {
				t.Errorf("%s committed with synchronous=%d, want %d", what, l, want)
			}
		}
	}
	batch := func(msgs []searchd.Message, deletes ...int64) error {
		_, err := db.Apply(ctx, &searchd.Batch{Messages: msgs, Deletes: deletes}, segment.DefaultRules, nil)
		return err
	}
	expect("an import batch", normal, func() error {
		_, err := db.Apply(ctx, &searchd.Batch{Messages: many(1, 3)}, segment.DefaultRules, &Checkpoint{Path: "/x.json", MessagesDone: 3})
		return err
	})
	expect("new messages", full, func() error { return batch(many(10, 3)) })
	edit := msg(10, 10*time.Minute, 0)
	edit.Content, edit.EditedAt = "edited text", t0.Add(time.Hour).UnixMicro()
	expect("an edit", full, func() error { return batch([]searchd.Message{edit}) })
	expect("a deletion", full, func() error { return batch(nil, 11) })
	expect("a backfill checkpoint", full, func() error { return db.SetBackfill(ctx, &Backfill{ChannelID: 100, BeforeID: 5}) })
	expect("a forget", full, func() error {
		_, err := db.Forget(ctx, ForgetFilter{Author: 1}, segment.DefaultRules)
		return err
	})
}
