package search

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// TestCursorRefusedOnlyForChangesItsAudienceReads: a cursor made for a
// member's channels pages on while other channels change, and is refused
// once a channel it searched or weighed by changes (a public thread of
// one included). A refusal for a change anywhere told a member that
// channels they cannot read were busy.
func TestCursorRefusedOnlyForChangesItsAudienceReads(t *testing.T) {
	const (
		staff         = 303 // a channel the member cannot read
		publicThread  = 601 // a public thread of #general
		privateThread = 602 // a private thread of #general, the member not in it
	)
	s := setup(t)
	ctx := context.Background()
	apply := func(b searchd.Batch) {
		t.Helper()
		if _, err := s.DB.Apply(ctx, &b, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
	}
	apply(searchd.Batch{Channels: []searchd.Channel{
		{ID: staff, GuildID: 9, Name: "staff"},
		{ID: publicThread, GuildID: 9, ParentID: general, Name: "boiler-thread", Kind: "GuildPublicThread"},
		{ID: privateThread, GuildID: 9, ParentID: general, Name: "hr", Kind: "GuildPrivateThread"},
	}})
	page := func(r Request) (*Response, error) {
		r.Query, r.Mode, r.Limit = "the", Lexical, 1
		return s.Search(ctx, r)
	}
	firstPage := func(r Request) Request {
		t.Helper()
		p1, err := page(r)
		if err != nil || p1.NextCursor == "" {
			t.Fatalf("first page: %v, %+v", err, p1)
		}
		r.Cursor = p1.NextCursor
		return r
	}
	pages := func(name string, r Request) {
		t.Helper()
		if _, err := page(r); err != nil {
			t.Errorf("%s: the next page was refused: %v", name, err)
		}
	}
	refused := func(name string, r Request) {
		t.Helper()
		_, err := page(r)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "messages were added, edited or deleted since this cursor was made") {
			t.Errorf("%s: %v; want the cursor refused as stale", name, err)
		}
	}
	member := Request{Filter: sqlite.Filter{Channels: []int64{general, games}}}

	// Changes the member cannot read: a message in #staff, one in a
	// private thread of #general, an edit and a deletion there.
	r := firstPage(member)
	apply(searchd.Batch{Messages: []searchd.Message{m(100, staff, bob, 50*time.Hour, "the staff party"), m(101, privateThread, bob, 51*time.Hour, "the raise")}})
	pages("a message in an unread channel", r)
	edited := m(100, staff, bob, 50*time.Hour, "the staff party moved")
	edited.EditedAt = t0.Add(52 * time.Hour).UnixMicro()
	apply(searchd.Batch{Messages: []searchd.Message{edited}, Deletes: []int64{101}})
	pages("an edit and a deletion in unread channels", r)
	// A picked channel (#games) with the member's channels as readable.
	picked := Request{Filter: sqlite.Filter{Channels: []int64{games}}, Readable: []int64{general, games}}
	rp := firstPage(picked)
	apply(searchd.Batch{Messages: []searchd.Message{m(102, staff, bob, 53*time.Hour, "the staff lunch")}})
	pages("a picked channel, a message in an unread channel", rp)

	// Changes the member reads: a public thread of #general, #general
	// itself, a channel readable though not picked (its words weigh the
	// ranking), an edit, a deletion.
	for _, c := range []struct {
		name string
		r    Request
		b    searchd.Batch
	}{
		{"a message in a public thread of a searched channel", member, searchd.Batch{Messages: []searchd.Message{m(103, publicThread, bob, 54*time.Hour, "the thread")}}},
		{"a message in a searched channel", member, searchd.Batch{Messages: []searchd.Message{m(104, general, bob, 55*time.Hour, "the news")}}},
		{"a message in a readable channel not picked", picked, searchd.Batch{Messages: []searchd.Message{m(105, general, bob, 56*time.Hour, "the other news")}}},
		{"a deletion in a searched channel", member, searchd.Batch{Deletes: []int64{104}}},
		{"an edit in a searched channel", member, searchd.Batch{Messages: []searchd.Message{func() searchd.Message {
			e := m(105, general, bob, 56*time.Hour, "the other news, edited")
			e.EditedAt = t0.Add(57 * time.Hour).UnixMicro()
			return e
		}()}}},
	} {
		r := firstPage(c.r)
		apply(c.b)
		refused(c.name, r)
	}

	// A search over every channel (no channel filter) is refused for any
	// change; a reindex refuses every cursor.
	all := firstPage(Request{})
	apply(searchd.Batch{Messages: []searchd.Message{m(106, staff, bob, 58*time.Hour, "the staff dinner")}})
	refused("no channel filter, a change anywhere", all)
	r = firstPage(member)
	if err := s.DB.ResetVectors(ctx, "fixture", 8, ""); err != nil {
		t.Fatal(err)
	}
	refused("a reindex", r)
}

// A public thread of a searched channel holds the latest change of the
// cursor's scope; the thread is then deleted on Discord (its messages and
// its channel row go), so the scope no longer counts it. Its changes are
// its parent's too, so the scope's version does not go down, and the
// cursor is refused as stale, not with a false "the database was
// replaced".
func TestCursorVersionNeverGoesDown(t *testing.T) {
	const publicThread = 611
	s := setup(t)
	ctx := context.Background()
	apply := func(b searchd.Batch) {
		t.Helper()
		if _, err := s.DB.Apply(ctx, &b, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
	}
	apply(searchd.Batch{Channels: []searchd.Channel{
		{ID: publicThread, GuildID: 9, ParentID: general, Name: "boiler-thread", Kind: "GuildPublicThread"}}})
	apply(searchd.Batch{Messages: []searchd.Message{m(110, publicThread, bob, 60*time.Hour, "the thread talk")}})
	req := Request{Query: "the", Mode: Lexical, Limit: 1, Filter: sqlite.Filter{Channels: []int64{general, games}}}
	p1, err := s.Search(ctx, req)
	if err != nil || p1.NextCursor == "" {
		t.Fatalf("first page: %v %+v", err, p1)
	}
	if _, err := s.DB.ForgetDeletedChannels(ctx, []int64{publicThread}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	req.Cursor = p1.NextCursor
	_, err = s.Search(ctx, req)
	if err == nil || strings.Contains(err.Error(), "database was replaced") {
		t.Fatalf("after a thread of #general was deleted: %v; want the cursor refused as stale (messages deleted)", err)
	}
}
