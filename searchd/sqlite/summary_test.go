package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// revisionOf is segment id's revision now.
func revisionOf(t testing.TB, db *DB, id int64) int64 {
	t.Helper()
	var r int64
	if err := db.db.QueryRowContext(context.Background(), `SELECT revision FROM segments WHERE id = ?`, id).Scan(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A catch-up summary is written from messages read seconds before, while
// the LLM ran: a message deleted or edited meanwhile moved the segment's
// revision, and the summary of the old text is not cached as current.
func TestSummaryOfOldTextNotKept(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	apply(t, db, msg(1, 0, 0), msg(2, time.Minute, 0), msg(3, 2*time.Minute, 0))
	segs, err := db.SegmentsInRange(ctx, 100, 0, 0, 10)
	if err != nil || len(segs) != 1 {
		t.Fatalf("segments: %+v, %v", segs, err)
	}
	sg := segs[0]
	for _, change := range []*searchd.Batch{
		{Deletes: []int64{2}},
		{Messages: []searchd.Message{func() searchd.Message {
			m := msg(3, 2*time.Minute, 0)
			m.Content, m.EditedAt = "edited", t0.Add(time.Hour).UnixMicro()
			return m
		}()}},
	} {
		if _, err := db.Apply(ctx, change, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveSummary(ctx, sg.ID, sg.Revision, "m", Summary{Text: "what message 2 said"}); err != nil {
			t.Fatal(err)
		}
		if s, err := db.CachedSummary(ctx, sg.ID, "m"); err != nil || s != nil {
			t.Errorf("after %+v: cached %+v, %v; want nothing (the summary was of the text before)", change, s, err)
		}
		sg.Revision = revisionOf(t, db, sg.ID)
	}
	if err := db.SaveSummary(ctx, sg.ID, sg.Revision, "m", Summary{Text: "now"}); err != nil {
		t.Fatal(err)
	}
	if s, err := db.CachedSummary(ctx, sg.ID, "m"); err != nil || s == nil || s.Text != "now" {
		t.Errorf("at the current revision: %+v, %v", s, err)
	}
}

// A deleted conversation's ID is never another's, in its channel or any
// other: what was keyed by it cannot land on a conversation it never
// described.
func TestSegmentIDsNeverReused(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	apply(t, db, msg(1, 0, 0), msg(2, 5*time.Hour, 0))
	newest := func(channel int64) SegmentInfo {
		t.Helper()
		segs, err := db.SegmentsInRange(ctx, channel, 0, 0, 1)
		if err != nil || len(segs) != 1 {
			t.Fatalf("segments of %d: %+v, %v", channel, segs, err)
		}
		return segs[0]
	}
	gone := newest(100)
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{2}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if newest(100).ID == gone.ID {
		t.Fatal("the deleted conversation is still the newest")
	}
	other := msg(3, 6*time.Hour, 0)
	other.ChannelID = 200
	again := msg(4, 12*time.Hour, 0)
	apply(t, db, other, again)
	for _, ch := range []int64{200, 100} {
		if s := newest(ch); s.ID <= gone.ID {
			t.Errorf("channel %d's new conversation has ID %d, not above the deleted %d", ch, s.ID, gone.ID)
		}
	}
	checkSegments(t, db)
}

// A database a newer searchd migrated is not opened by an older one: its
// code may rely on what the newer migration made.
func TestNewerSchemaRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES ('9999_from_the_future.sql', 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := Open(ctx, dir); !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "9999_from_the_future.sql") {
		if err == nil {
			db.Close()
		}
		t.Fatalf("opening a newer database: %v, want ErrNewerSchema naming the migration", err)
	}
}

// A write refused for want of room is told apart (the server answers it
// with 507, which the bot retries), not reported as an internal error.
func TestIsFull(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	conn, err := db.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var pages int
	if err := conn.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
	_, err = conn.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('filler', ?)`, strings.Repeat("x", 1<<20))
	if !IsFull(err) {
		t.Fatalf("a write past the file's bound: %v, want IsFull", err)
	}
	if IsFull(errors.New("database or disk is full")) || IsFull(nil) {
		t.Error("IsFull of an error SQLite did not return")
	}
}
