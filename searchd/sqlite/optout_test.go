package sqlite

import (
	"context"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// A member who opts out is forgotten, and nothing of theirs is stored
// again, old (a backfill page, an import) or new, until they opt back in.
func TestOptOut(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	const member = 9
	other, mine := msg(1, 0, 0), msg(2, time.Minute, 0)
	mine.Author.ID, mine.Author.Username, mine.Author.Nickname = member, "optsout", "숨김"
	apply(t, db, other, mine)

	n, err := db.OptOut(ctx, member, segment.DefaultRules)
	if err != nil || n != 1 {
		t.Fatalf("opt out: forgot %d, %v", n, err)
	}
	if _, err := db.Message(ctx, 2); err != ErrNotFound {
		t.Errorf("their message after opting out: %v", err)
	}
	names, _ := db.AuthorNames(ctx, nil)
	if names["optsout"] != nil || names["숨김"] != nil {
		t.Errorf("their names are kept: %v", names)
	}
	// The old message again (a backfill page, an import) and a new one.
	later := msg(3, 2*time.Minute, 0)
	later.Author = mine.Author
	if r := apply(t, db, mine, later, msg(4, 3*time.Minute, 0)); r.Skipped != 2 || r.Inserted != 1 {
		t.Errorf("after opting out: %+v, want their 2 skipped and the other inserted", r)
	}
	if _, err := db.Message(ctx, 3); err != ErrNotFound {
		t.Errorf("a new message of theirs was stored: %v", err)
	}
	if names, _ := db.AuthorNames(ctx, nil); names["optsout"] != nil {
		t.Errorf("a new message stored their name: %v", names)
	}
	if c, err := db.OptOuts(ctx); err != nil || c != 1 {
		t.Errorf("opt-outs: %d, %v", c, err)
	}
	if again, err := db.OptOut(ctx, member, segment.DefaultRules); err != nil || again != 0 {
		t.Errorf("opting out twice: %d, %v", again, err)
	}

	// The way back: new messages are stored again; forgotten ones stay so.
	if was, err := db.OptIn(ctx, member); err != nil || !was {
		t.Fatalf("opt in: %v, %v", was, err)
	}
	if was, _ := db.OptIn(ctx, member); was {
		t.Error("opting in twice says they had opted out")
	}
	newer := msg(5, 4*time.Minute, 0)
	newer.Author = mine.Author
	if r := apply(t, db, mine, newer); r.Inserted != 1 || r.Skipped != 1 {
		t.Errorf("after opting in: %+v, want the new one inserted and the forgotten one skipped", r)
	}
	if out, _ := db.OptedOut(ctx, member); out {
		t.Error("still opted out")
	}
	checkSegments(t, db)
}

// A cached catch-up summary goes with a deletion or an edit of a message
// it summarized: stale ones are never shown, but they would keep on disk
// what was taken away.
func TestSummaryGoesWithItsText(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	apply(t, db, msg(1, 0, 0), msg(2, time.Minute, 0), msg(3, 2*time.Minute, 0))
	m, err := db.Message(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	summaries := func() int {
		var n int
		if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM segment_summaries`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	save := func() {
		if err := db.SaveSummary(ctx, m.SegmentID, revisionOf(t, db, m.SegmentID), "model", Summary{Text: "what message 2 said"}); err != nil {
			t.Fatal(err)
		}
	}
	save()
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{2}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if n := summaries(); n != 0 {
		t.Errorf("a deletion left %d cached summaries", n)
	}
	save()
	edit := msg(3, 2*time.Minute, 0)
	edit.Content, edit.EditedAt = "changed my mind", t0.Add(time.Hour).UnixMicro()
	apply(t, db, edit)
	if n := summaries(); n != 0 {
		t.Errorf("an edit left %d cached summaries", n)
	}
}
