package sqlite

import (
	"context"
	"slices"
	"testing"
	"time"

	"dsearch/migrations"
	"dsearch/searchd"
	"dsearch/searchd/lexical"
	"dsearch/searchd/segment"
)

// A channel where people talk about a call, Discord records one and a
// join, and a bot answers a slash command.
func noticesChannel() []searchd.Message {
	talk := msg(1, 0, 0)
	talk.Content = "shall we do a call tonight about the boiler"
	call := msg(2, 2*time.Hour, 0)
	call.Type, call.Content = "Call", "Started a call that lasted 251 minutes."
	join := msg(3, 2*time.Hour+time.Minute, 0)
	join.Type, join.Content = "GuildMemberJoin", "Joined the server. call"
	command := msg(4, 5*time.Hour, 0)
	command.Type, command.Content = "ChatInputCommand", "call schedule: the boiler call is on Friday"
	command.Author = searchd.Author{ID: 9, Username: "helperbot", Bot: true}
	menu := msg(5, 5*time.Hour+time.Minute, 0)
	menu.Type, menu.Content = "ContextMenuCommand", "translated: the boiler call moves to Saturday"
	menu.Author = command.Author
	// DiscordChatExporter names a slash command's reply by its number.
	exported := msg(6, 6*time.Hour, 0)
	exported.Type, exported.Content = "20", "poll closed: the call wins"
	exported.Author = command.Author
	return []searchd.Message{talk, call, join, command, menu, exported}
}

// Discord's notices are kept as history (stored, in a segment that
// searchd segment shows) but are never a keyword hit, in FTS5 or in the
// in-memory index's scan and change log, carry no text to embed, and a
// segment of notices alone is no conversation to catch up on. A command's
// reply is something said.
func TestNoticesAreHistoryNotTalk(t *testing.T) {
	for name, rules := range map[string]segment.Rules{"linker": segment.DefaultRules, "blog": segment.BlogRules} {
		t.Run(name, func(t *testing.T) {
			db := openTest(t)
			ctx := context.Background()
			if _, err := db.Apply(ctx, &searchd.Batch{Messages: noticesChannel()}, rules, nil); err != nil {
				t.Fatal(err)
			}
			checkNotices(t, db)
		})
	}
}

func checkNotices(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	spokenIDs := []int64{1, 4, 5, 6}

	hits, err := db.Lexical(ctx, lexical.MatchExpr(lexical.Terms("call")), Filter{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, h := range hits {
		got = append(got, h.MessageID)
	}
	slices.Sort(got)
	if !slices.Equal(got, spokenIDs) {
		t.Errorf("FTS5 hits %v, want %v", got, spokenIDs)
	}

	var scanned []int64
	if _, err := db.ScanTexts(ctx, func(d lexical.Doc) { scanned = append(scanned, d.ID) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(scanned)
	if !slices.Equal(scanned, spokenIDs) {
		t.Errorf("in-memory index loads %v, want %v", scanned, spokenIDs)
	}
	changed, _, _, err := db.TextChanges(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range changed {
		if !slices.Contains(spokenIDs, d.ID) {
			t.Errorf("change log gives the in-memory index notice %d", d.ID)
		}
	}

	pending, err := db.PendingMessages(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pending {
		if (p.Content == "") != !slices.Contains(spokenIDs, p.ID) {
			t.Errorf("message %d is embedded from %q", p.ID, p.Content)
		}
	}
	// What was handed out is saved as handed out, notices included (a
	// vector row of nothing), so none stays pending for ever.
	vs := make([]MessageVector, len(pending))
	for i, p := range pending {
		vs[i] = MessageVector{ID: p.ID, Content: p.Content}
	}
	if saved, err := db.SaveMessageVectors(ctx, vs); err != nil || saved != len(vs) {
		t.Errorf("saved %d of %d pending message vectors (%v)", saved, len(vs), err)
	}
	if left, err := db.PendingMessages(ctx, 0, 100); err != nil || len(left) != 0 {
		t.Errorf("still pending after saving: %v (%v)", left, err)
	}

	of, err := db.SegmentsOf(ctx, []int64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	convs, err := db.SegmentsInRange(ctx, 100, 0, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range convs {
		msgs, err := db.SegmentMessages(ctx, []int64{s.ID}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs[s.ID]) == 0 {
			t.Errorf("catch-up lists segment %d of notices alone", s.ID)
		}
	}
	if !slices.ContainsFunc(convs, func(s SegmentInfo) bool { return s.ID == of[4] }) {
		t.Errorf("catch-up misses the command's reply (segment %d) in %v", of[4], convs)
	}
	// The call is history: stored and shown with its segment.
	_, shown, err := db.Segment(ctx, of[2], 10)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(shown, func(m StoredMessage) bool { return m.ID == 2 }) {
		t.Errorf("the call's segment does not show it: %v", shown)
	}
}

// A database indexed before notices left the keyword index loses them
// when migration 0022 builds the index anew (fillKeywordIndex indexes what
// applier.indexText would).
func TestNoticesLeaveAnOldKeywordIndex(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	apply(t, db, noticesChannel()...)
	call := "Started a call that lasted 251 minutes."
	if _, err := db.db.ExecContext(ctx, `INSERT INTO messages_fts (rowid, text, bigrams) VALUES (2, ?, '')`, call); err != nil {
		t.Fatal(err)
	}
	countHits := func() int {
		t.Helper()
		var n int
		if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?`,
			lexical.MatchExpr(lexical.Terms("lasted"))).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := countHits(); n != 1 {
		t.Fatalf("the notice indexed as an old database held it: %d hits, want 1", n)
	}
	sqlText, err := migrations.FS.ReadFile("0022_keyword_secure_delete.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, string(sqlText)); err != nil {
		t.Fatal(err)
	}
	if err := db.fillKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countHits(); n != 0 {
		t.Errorf("fillKeywordIndex indexes the notice (%d hits)", n)
	}
	checkNotices(t, db)
}
