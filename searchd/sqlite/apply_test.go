package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/lexical"
	"dsearch/searchd/segment"
	"dsearch/shared/api"
)

func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var t0 = time.Date(2024, 5, 1, 15, 2, 0, 0, time.UTC)

// msg builds a message in channel 100 at t0+offset.
func msg(id int64, offset time.Duration, replyTo int64) searchd.Message {
	return searchd.Message{ID: id, ChannelID: 100, CreatedAt: t0.Add(offset).UnixMicro(), ReplyToID: replyTo,
		Content: "message", Type: "Default", Author: searchd.Author{ID: 1, Username: "a"}}
}

func apply(t *testing.T, db *DB, msgs ...searchd.Message) searchd.BatchResult {
	t.Helper()
	res, err := db.Apply(context.Background(), &searchd.Batch{Messages: msgs}, segment.DefaultRules, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// membership maps each segment (numbered by first appearance in message ID
// order) to its message IDs, so tests compare shapes, not row IDs.
func membership(t *testing.T, db *DB) [][]int64 {
	t.Helper()
	rows, err := db.db.Query(`SELECT message_id, segment_id FROM message_segments ORDER BY message_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	index := map[int64]int{}
	var out [][]int64
	for rows.Next() {
		var m, s int64
		rows.Scan(&m, &s)
		i, ok := index[s]
		if !ok {
			i = len(out)
			index[s] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], m)
	}
	return out
}

// checkSegments verifies every segment's stored bounds and count against
// its members.
func checkSegments(t *testing.T, db *DB) {
	t.Helper()
	rows, err := db.db.Query(`SELECT s.id, s.message_count, s.start_at, s.end_at, s.start_message_id, s.end_message_id,
		COUNT(m.id), MIN(m.created_at), MAX(m.created_at)
		FROM segments s LEFT JOIN message_segments ms ON ms.segment_id = s.id LEFT JOIN messages m ON m.id = ms.message_id
		GROUP BY s.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, count, start, end, startMsg, endMsg, n int64
		var minAt, maxAt *int64
		rows.Scan(&id, &count, &start, &end, &startMsg, &endMsg, &n, &minAt, &maxAt)
		if n == 0 {
			t.Errorf("segment %d has no members but was kept", id)
			continue
		}
		if count != n || start != *minAt || end != *maxAt {
			t.Errorf("segment %d: stored count %d [%d, %d], members %d [%d, %d]", id, count, start, end, n, *minAt, *maxAt)
		}
		var startAt, endAt int64
		db.db.QueryRow(`SELECT created_at FROM messages WHERE id = ?`, startMsg).Scan(&startAt)
		db.db.QueryRow(`SELECT created_at FROM messages WHERE id = ?`, endMsg).Scan(&endAt)
		if startAt != start || endAt != end {
			t.Errorf("segment %d: start/end messages %d/%d do not match its bounds", id, startMsg, endMsg)
		}
	}
}

func TestSegmentationRules(t *testing.T) {
	db := openTest(t)
	apply(t, db,
		msg(1, 0, 0),
		msg(2, 10*time.Minute, 0),                // rule 2
		msg(3, 10*time.Minute+31*time.Minute, 0), // rule 3: 31 min after the end
		msg(4, 45*time.Minute, 0),                // rule 2 with segment 2
		msg(5, 5*time.Hour, 1),                   // rule 1: reply to 1 after 5 h reopens segment 1
		msg(6, 5*time.Hour+time.Minute, 0),       // rule 2: after a silence, talk follows the reopened segment
	)
	want := [][]int64{{1, 2, 5, 6}, {3, 4}}
	if got := membership(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("segments %v, want %v", got, want)
	}
	checkSegments(t, db)
	st, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Segment 1 now runs from 0 to 5h01m, over segment {3,4}.
	if st.OverlappingSegments != 1 {
		t.Errorf("overlapping segments = %d, want 1", st.OverlappingSegments)
	}
}

// A reply that reopens an older segment overlaps the conversation in
// between, which carries on in its own segment (footnote 12).
func TestReplyReopensOlderSegment(t *testing.T) {
	lines := []struct {
		id      int64
		at      time.Duration
		replyTo int64
		text    string
	}{
		{1, 0, 0, "we are moving house next month"}, {2, time.Minute, 0, "moving house is a lot of work"}, // evening: moving
		{3, 3 * time.Hour, 0, "anyone up for games tonight"}, {4, 3*time.Hour + time.Minute, 0, "games sound good, which games"}, // later: games
		{5, 3*time.Hour + 2*time.Minute, 1, "the moving van is booked"}, // a reply to the moving talk
		{6, 3*time.Hour + 3*time.Minute, 0, "the games start at nine"},  // games go on
	}
	for _, rules := range []segment.Rules{segment.BlogRules, segment.DefaultRules} {
		db := openTest(t)
		for i, l := range lines {
			m := msg(l.id, l.at, l.replyTo)
			m.Content, m.Author = l.text, searchd.Author{ID: int64(1 + i%2), Username: "friend"}
			if _, err := db.Apply(t.Context(), &searchd.Batch{Messages: []searchd.Message{m}}, rules, nil); err != nil {
				t.Fatal(err)
			}
		}
		want := [][]int64{{1, 2, 5}, {3, 4, 6}}
		if got := membership(t, db); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: segments %v, want %v", rules.Name(), got, want)
		}
		checkSegments(t, db)
	}
}

func TestReplyRules(t *testing.T) {
	db := openTest(t)
	other := msg(50, 0, 0)
	other.ChannelID = 200
	apply(t, db, msg(1, 0, 0), other)
	apply(t, db,
		msg(2, 25*time.Hour, 1),   // past 24 h: not rule 1 → new
		msg(3, 50*time.Hour, 50),  // parent in another channel → new
		msg(4, 80*time.Hour, 999), // parent unknown → new
	)
	want := [][]int64{{1}, {2}, {3}, {4}, {50}}
	if got := membership(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("segments %v, want %v", got, want)
	}
}

func TestApplyIsIdempotent(t *testing.T) {
	db := openTest(t)
	msgs := []searchd.Message{msg(1, 0, 0), msg(2, time.Minute, 1), msg(3, time.Hour, 0)}
	if r := apply(t, db, msgs...); r.Inserted != 3 {
		t.Fatalf("first apply: %+v", r)
	}
	before := membership(t, db)
	var rev int64
	db.db.QueryRow(`SELECT SUM(revision) FROM segments`).Scan(&rev)
	if r := apply(t, db, msgs...); r.Inserted != 0 || r.Unchanged != 3 || r.Updated != 0 {
		t.Fatalf("second apply: %+v", r)
	}
	var rev2 int64
	db.db.QueryRow(`SELECT SUM(revision) FROM segments`).Scan(&rev2)
	if got := membership(t, db); !reflect.DeepEqual(got, before) || rev2 != rev {
		t.Errorf("second apply changed segments: %v (rev %d) → %v (rev %d)", before, rev, got, rev2)
	}
}

func TestEditKeepsMembership(t *testing.T) {
	db := openTest(t)
	apply(t, db, msg(1, 0, 0), msg(2, time.Minute, 0), msg(3, 2*time.Hour, 0))
	seg, _, err := db.Segment(context.Background(), 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	edited := msg(2, time.Minute, 0)
	edited.Content, edited.EditedAt = "edited text", t0.Add(time.Hour).UnixMicro()
	if r := apply(t, db, edited); r.Updated != 1 {
		t.Fatalf("edit: %+v", r)
	}
	after, msgs, _ := db.Segment(context.Background(), 1, 10)
	if after.Revision <= seg.Revision {
		t.Errorf("revision %d → %d: an edit must mark the segment for re-embedding", seg.Revision, after.Revision)
	}
	if len(msgs) != 2 || msgs[1].Content != "edited text" || msgs[1].EditedAt == 0 {
		t.Errorf("segment after edit: %+v", msgs)
	}
	if got := membership(t, db); !reflect.DeepEqual(got, [][]int64{{1, 2}, {3}}) {
		t.Errorf("segments %v", got)
	}
	// The unedited copy arriving late (a backfill page fetched before the
	// edit) leaves the edit in place.
	if r := apply(t, db, msg(2, time.Minute, 0)); r.Unchanged != 1 {
		t.Errorf("stale copy: %+v", r)
	}
	if _, msgs, _ := db.Segment(context.Background(), 1, 10); msgs[1].Content != "edited text" {
		t.Errorf("a stale copy undid the edit: %q", msgs[1].Content)
	}
}

// An edit's mentions replace the old text's: a member the old text
// mentioned stayed in message_mentions after an edit took them out, a
// trace of what the edit removed (and the linker went on reading the
// message as addressed to them). A partial update, which carries no
// mentions, keeps them.
func TestEditTakesOutTheMentionsItRemoved(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	m := msg(1, 0, 0)
	m.Content, m.Mentions = "<@42> <@43> meet me", []int64{42, 43}
	apply(t, db, m)
	mentions := func() []int64 {
		ids, err := queryIDs(ctx, db.db, `SELECT user_id FROM message_mentions WHERE message_id = 1 ORDER BY user_id`)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	partial := searchd.Message{ID: 1, ChannelID: 100, Partial: true, Embeds: []api.Embed{{Title: "a preview"}}}
	if r := apply(t, db, partial); r.Updated != 1 {
		t.Fatalf("partial update: %+v", r)
	}
	if got := mentions(); !reflect.DeepEqual(got, []int64{42, 43}) {
		t.Errorf("after a partial update, mentions %v; want [42 43]", got)
	}
	edited := msg(1, 0, 0)
	edited.Content, edited.Mentions, edited.EditedAt = "<@44> meet me", []int64{44}, t0.Add(time.Hour).UnixMicro()
	if r := apply(t, db, edited); r.Updated != 1 {
		t.Fatalf("edit: %+v", r)
	}
	if got := mentions(); !reflect.DeepEqual(got, []int64{44}) {
		t.Errorf("after an edit to mention 44 alone, mentions %v", got)
	}
}

func TestDelete(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	apply(t, db, msg(1, 0, 0), msg(2, time.Minute, 0), msg(3, 2*time.Minute, 0), msg(4, 2*time.Hour, 0))
	// Deleting a segment's last message moves its end back.
	res, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{3, 4}}, segment.DefaultRules, nil)
	if err != nil || res.Deleted != 2 {
		t.Fatalf("delete: %+v, %v", res, err)
	}
	checkSegments(t, db) // also fails if the emptied segment of 4 was kept
	seg, _, err := db.Segment(ctx, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if seg.MessageCount != 2 || seg.EndMessageID != 2 {
		t.Errorf("after delete: %+v", seg)
	}
	if _, _, err := db.Segment(ctx, 2, 10); err != ErrNotFound {
		t.Errorf("emptied segment: err %v, want ErrNotFound", err)
	}
	// A later import of an old export does not bring deleted messages back.
	if r := apply(t, db, msg(3, 2*time.Minute, 0), msg(5, 3*time.Minute, 0)); r.Skipped != 1 || r.Inserted != 1 {
		t.Errorf("re-import after delete: %+v", r)
	}
	if _, err := db.Message(ctx, 3); err != ErrNotFound {
		t.Errorf("deleted message came back: %v", err)
	}
	if got := membership(t, db); !reflect.DeepEqual(got, [][]int64{{1, 2, 5}}) {
		t.Errorf("segments %v", got)
	}
	// Deleting an unknown message is not an error.
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{12345}}, segment.DefaultRules, nil); err != nil {
		t.Error(err)
	}
}

// Messages that arrive out of order (an older export imported after a newer
// one) are segmented as an in-order import would (see also
// TestSegmentationIgnoresArrivalOrder).
func TestOutOfOrder(t *testing.T) {
	db := openTest(t)
	apply(t, db, msg(10, 10*time.Hour, 0), msg(11, 10*time.Hour+time.Minute, 0))
	apply(t, db, msg(1, 0, 0), msg(2, 5*time.Minute, 0), msg(12, 10*time.Hour+2*time.Minute, 0))
	apply(t, db, msg(3, 6*time.Minute, 0))
	want := [][]int64{{1, 2, 3}, {10, 11, 12}}
	if got := membership(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("segments %v, want %v", got, want)
	}
	checkSegments(t, db)
}

func TestAuthorsAndAliases(t *testing.T) {
	db := openTest(t)
	a := msg(1, 0, 0)
	a.Author = searchd.Author{ID: 7, Username: "hajun", Nickname: "하준"}
	b := msg(2, 24*time.Hour, 0)
	b.Author = searchd.Author{ID: 7, Username: "hajun", Nickname: "준이", GlobalName: "Hajun"}
	apply(t, db, b)
	apply(t, db, a) // older name arrives later: display name stays the newest
	for _, id := range []int64{1, 2} {
		m, err := db.Message(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if m.AuthorName != "준이" {
			t.Errorf("message %d's author name %q, want the most recent nickname", id, m.AuthorName)
		}
	}
	rows, _ := db.db.Query(`SELECT kind, name FROM user_names WHERE user_id = 7 ORDER BY kind, name`)
	defer rows.Close()
	var names []string
	for rows.Next() {
		var k, n string
		rows.Scan(&k, &n)
		names = append(names, k+":"+n)
	}
	want := []string{"global:Hajun", "nickname:준이", "nickname:하준", "username:hajun"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
}

func TestOpenPermissionsAndMigrations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil || v < 1 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	db.Close()
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, FileName): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	// Opening again applies nothing twice.
	db, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	db.db.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n)
	if v2, _ := db.SchemaVersion(ctx); n != v || v2 != v {
		t.Errorf("after reopening: %d migrations recorded, version %d; want %d", n, v2, v)
	}
	if ok, err := db.QuickCheck(ctx); err != nil || ok != "ok" {
		t.Errorf("quick_check: %q, %v", ok, err)
	}
}

// The same message ID in another channel's export is refused and counted:
// the stored message keeps its text and channel, since moving text across
// channels would show it to readers of the other channel.
func TestSameIDInAnotherChannel(t *testing.T) {
	db := openTest(t)
	first := msg(1, 0, 0)
	first.Content = "first channel's text"
	apply(t, db, first)
	other := msg(1, time.Minute, 0)
	other.ChannelID, other.Content = 200, "second channel's text"
	res := apply(t, db, other)
	if res.Conflicts != 1 || res.Updated != 0 || res.Inserted != 0 || !reflect.DeepEqual(res.ConflictIDs, []int64{1}) {
		t.Errorf("result %+v, want one conflict, id 1", res)
	}
	var channel int64
	var content string
	if err := db.db.QueryRow(`SELECT channel_id, content FROM messages WHERE id = 1`).Scan(&channel, &content); err != nil {
		t.Fatal(err)
	}
	if channel != 100 || content != first.Content {
		t.Errorf("stored message is in channel %d with %q, want channel 100's", channel, content)
	}
	// The same channel still takes an edit.
	first.Content, first.EditedAt = "edited", t0.Add(time.Hour).UnixMicro()
	if res := apply(t, db, first); res.Updated != 1 || res.Conflicts != 0 {
		t.Errorf("edit: %+v", res)
	}
}

// A partial update erases nothing it does not carry: not the text, type,
// reply, attachments or edit time of the stored message, nor its author's
// stored names; what it does carry replaces what is stored.
func TestPartialUpdateKeepsWhatItDoesNotCarry(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	first := msg(1, 0, 0)
	stored := msg(2, time.Minute, 1)
	stored.Type, stored.Content, stored.Attachments = "Reply", "the spare key is under the blue pot", 2
	stored.Author.GlobalName = "Alice"
	apply(t, db, first, stored)

	bare := searchd.Message{ID: 2, ChannelID: 100, CreatedAt: stored.CreatedAt, Partial: true, Author: searchd.Author{ID: 1}}
	if res := apply(t, db, bare); res.Updated != 0 {
		t.Errorf("a partial update without changes: %+v", res)
	}
	got, err := db.Message(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != stored.Content || got.Type != "Reply" || got.ReplyToID != 1 || got.Attachments != 2 || got.EditedAt != 0 {
		t.Errorf("after a partial update: %+v", got)
	}
	var name, display string
	db.db.QueryRow(`SELECT name, display_name FROM users WHERE id = 1`).Scan(&name, &display)
	if name != "a" || display != "Alice" {
		t.Errorf("author after a partial update: %q %q", name, display)
	}

	// Edited, without its text (Discord sends the edit time alone).
	touched := bare
	touched.EditedAt = t0.Add(2 * time.Minute).UnixMicro()
	apply(t, db, touched)
	if got, _ := db.Message(ctx, 2); got.Content != stored.Content {
		t.Errorf("a partial update with an edit time erased the text: %+v", got)
	}
	edit := bare
	edit.Content, edit.EditedAt = "the key is with bob now", t0.Add(3*time.Minute).UnixMicro()
	if res := apply(t, db, edit); res.Updated != 1 {
		t.Errorf("a partial edit: %+v", res)
	}
	if got, _ := db.Message(ctx, 2); got.Content != edit.Content || got.Type != "Reply" || got.Attachments != 2 {
		t.Errorf("after a partial edit: %+v", got)
	}
}

// A link preview Discord adds after a message was sent (a partial update
// carrying embeds alone, without an author) joins the stored text, once,
// and is found by keyword; one for a message not stored stores nothing.
func TestLinkPreviewJoinsStoredText(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	stored := msg(1, 0, 0)
	stored.Content = "read this before the review https://go.dev/doc/effective_go\n📎 notes.txt"
	apply(t, db, stored)

	preview := searchd.Message{ID: 1, ChannelID: 100, CreatedAt: stored.CreatedAt, Partial: true,
		Embeds: []api.Embed{{Title: "Effective Go", Description: "Tips for writing clear, idiomatic Go code."}}}
	want := stored.Content + "\n🔗 Effective Go — Tips for writing clear, idiomatic Go code."
	for i, wantRes := range []searchd.BatchResult{{Updated: 1, UpdatedIDs: []int64{1}}, {Unchanged: 1}} {
		if res := apply(t, db, preview); !reflect.DeepEqual(res, wantRes) {
			t.Errorf("preview %d: %+v, want %+v", i+1, res, wantRes)
		}
		got, err := db.Message(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != want || got.AuthorID != stored.Author.ID || got.Type != "Default" {
			t.Errorf("after preview %d: %+v, want content %q", i+1, got, want)
		}
	}
	hits, err := db.Lexical(ctx, lexical.MatchExpr(lexical.Terms("idiomatic")), Filter{}, 10)
	if err != nil || len(hits) != 1 || hits[0].MessageID != 1 {
		t.Errorf("the preview is not found: %+v, %v", hits, err)
	}

	unknown := preview
	unknown.ID = 2
	if res := apply(t, db, unknown); !reflect.DeepEqual(res, searchd.BatchResult{Unchanged: 1}) {
		t.Errorf("a preview of a message not stored: %+v", res)
	}
	if _, err := db.Message(ctx, 2); !errors.Is(err, ErrNotFound) {
		t.Errorf("a preview of a message not stored was stored: %v", err)
	}
	var users int
	db.db.QueryRow(`SELECT COUNT(*) FROM users WHERE id = 0`).Scan(&users)
	if users != 0 {
		t.Error("a preview without an author made a user 0")
	}
}

// The keyword rows of a batch are added at its end, in rowid order
// (indexQueued): a message the batch deleted is not found, one it edited
// again is found by its last text, whatever the channels' order.
func TestQueuedKeywordsFollowTheBatch(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	find := func(word string) []int64 { // the index itself: Lexical would hide a deleted message's row
		t.Helper()
		rows, err := db.db.QueryContext(ctx, `SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid`, word)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	gone, kept, other := msg(3, 0, 0), msg(1, time.Second, 0), msg(2, 2*time.Second, 0)
	gone.Content, kept.Content, other.Content = "boiler broke", "boiler fixed", "boiler elsewhere"
	other.ChannelID = 99 // a lower channel with a higher ID: the batch stores it first
	edited := kept
	edited.Content, edited.EditedAt = "kettle fixed", t0.Add(time.Minute).UnixMicro()
	b := searchd.Batch{Messages: []searchd.Message{gone, kept, edited, other}, Deletes: []int64{3}}
	if _, err := db.Apply(ctx, &b, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if boiler, kettle, fixed := find("boiler"), find("kettle"), find("fixed"); !slices.Equal(boiler, []int64{2}) ||
		!slices.Equal(kettle, []int64{1}) || !slices.Equal(fixed, []int64{1}) {
		t.Errorf("boiler finds %v (want [2]), kettle %v, fixed %v (want [1])", boiler, kettle, fixed)
	}
}
