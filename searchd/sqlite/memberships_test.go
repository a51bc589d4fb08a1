package sqlite

import (
	"context"
	"maps"
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
// membership. A copy taken with the log's position and brought forward
// by its entries is the table.
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
	for _, step := range []struct {
		what, q string
		args    []any
	}{
		{"a move", `UPDATE message_segments SET segment_id = ? WHERE message_id = ?`, []any{copyOf[b], a}},
		{"a segment's deletion", `DELETE FROM segments WHERE id = ?`, []any{copyOf[b]}},
		{"a message's deletion", `DELETE FROM messages WHERE id = ?`, []any{c}},
		{"a new membership", `INSERT INTO message_segments (message_id, segment_id) VALUES (?, ?)`, []any{b, copyOf[c]}},
	} {
		if _, err := db.db.ExecContext(ctx, step.q, step.args...); err != nil {
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
