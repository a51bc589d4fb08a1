package sqlite

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// memberships reads message → segment as stored.
func memberships(t *testing.T, db *DB) (map[int64]int64, int64) {
	t.Helper()
	out := map[int64]int64{}
	seq, err := db.ScanMemberships(context.Background(), func(m, s int64) { out[m] = s })
	if err != nil {
		t.Fatal(err)
	}
	return out, seq
}

// The log follows every write to message_segments, whatever makes it: a
// move (replay.relabel's UPDATE, which no arrival order tried here
// reaches), a segment's deletion and a message's (their cascades), a new
// membership (placing a message, which logs it: the only INSERT, as
// TestOnlyPlacingInsertsMemberships checks). A copy taken with the log's
// position and brought forward by its entries is the table.
func TestMembershipLogFollowsEveryWrite(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	msgs := history(1, 200)
	applyAll(t, db, segment.DefaultRules, [][]searchd.Message{msgs})
	copyOf, seq := memberships(t, db)
	if len(copyOf) != len(msgs) {
		t.Fatalf("%d memberships for %d messages", len(copyOf), len(msgs))
	}
	var a, b, c int64 // three messages of different segments
	for _, m := range msgs {
		switch s := copyOf[m.ID]; {
		case a == 0:
			a = m.ID
		case b == 0 && s != copyOf[a]:
			b = m.ID
		case c == 0 && b != 0 && s != copyOf[a] && s != copyOf[b]:
			c = m.ID
		}
	}
	later := history(1, 206)[200:] // messages after the others
	for _, step := range []struct {
		what, q string
		args    []any
		batch   *searchd.Batch // instead of q: applied
	}{
		{what: "a move", q: `UPDATE message_segments SET segment_id = ? WHERE message_id = ?`, args: []any{copyOf[b], a}},
		{what: "a segment's deletion", q: `DELETE FROM segments WHERE id = ?`, args: []any{copyOf[b]}},
		{what: "a message's deletion", q: `DELETE FROM messages WHERE id = ?`, args: []any{c}},
		{what: "new memberships", batch: &searchd.Batch{Messages: later[:2]}},
		// The placement is logged after the deletion's trigger entry.
		{what: "a membership made and deleted in one batch", batch: &searchd.Batch{Messages: later[2:4], Deletes: []int64{later[2].ID}}},
		{what: "one made, an older one deleted", batch: &searchd.Batch{Messages: later[4:], Deletes: []int64{later[0].ID}}},
	} {
		var err error
		if step.batch != nil {
			_, err = db.Apply(ctx, step.batch, segment.DefaultRules, nil)
		} else {
			_, err = db.db.ExecContext(ctx, step.q, step.args...)
		}
		if err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		changes, err := db.MembershipChanges(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) == 0 {
			t.Fatalf("%s: not in the log", step.what)
		}
		for _, ch := range changes {
			if ch.SegmentID == 0 {
				delete(copyOf, ch.MessageID)
			} else {
				copyOf[ch.MessageID] = ch.SegmentID
			}
			seq = ch.Seq
		}
		if stored, _ := memberships(t, db); !maps.Equal(copyOf, stored) {
			t.Errorf("%s: the copy brought forward by the log has %d memberships, the table %d", step.what, len(copyOf), len(stored))
		}
	}
}

// Placing a message (applier.place) is the only statement that inserts
// into message_segments, and it logs what it inserts (logMemberships): the
// table's insert trigger is gone (migration 0013). Another INSERT would
// not be followed by index.Memberships.
func TestOnlyPlacingInsertsMemberships(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	insert := regexp.MustCompile(`(?i)\b(INSERT|REPLACE)\b[^;` + "`" + `]*?\bINTO\s+message_segments\b`)
	var found []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range insert.FindAll(src, -1) {
			found = append(found, f+": "+string(m))
		}
	}
	if len(found) != 1 || found[0] != "place.go: "+strings.TrimSuffix(qMember, " (message_id, segment_id) VALUES (?, ?)") {
		t.Errorf("statements inserting memberships: %q; want only place.go's qMember (placing logs it: logMemberships)", found)
	}
}
