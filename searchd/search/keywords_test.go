package search

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/index"
	"dsearch/searchd/ingest"
	"dsearch/searchd/internal/sample"
	"dsearch/searchd/lexical"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
	"dsearch/searchd/sqlite/sqlitetest"
)

// The in-memory keyword index ranks exactly as FTS5's bm25() does: the
// same messages, the same scores, with keywords and filters, when its
// statistics are every channel's as FTS5's are (an audience that reads
// them all).
func TestMemoryIndexRanksAsFTS5(t *testing.T) {
	ctx := context.Background()
	db := syntheticDB(t, sample.Synthetic{Messages: 20000, Channels: 3, Users: 6, Seed: 5, ReplyRate: 0.05})
	kw := &index.Keywords{DB: db}
	if err := kw.Load(ctx); err != nil {
		t.Fatal(err)
	}
	mem := &Service{DB: db, Keywords: kw, Config: DefaultConfig()}
	mem.Config.AuthorBoost = 0
	st, _ := db.Stats(ctx)
	mid := (st.FirstAt + st.LastAt) / 2
	some, err := db.Lexical(ctx, lexical.MatchExpr(lexical.Terms("치킨")), sqlite.Filter{}, 1)
	if err != nil || len(some) == 0 {
		t.Fatalf("no author to filter by: %v", err)
	}
	where, err := db.Message(ctx, some[0].MessageID)
	if err != nil {
		t.Fatal(err)
	}
	names, err := db.Channels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var every []int64
	for _, c := range names {
		every = append(every, c.ID)
	}
	cases := []Request{
		{Query: "weather coffee", Filter: sqlite.Filter{Channels: []int64{where.ChannelID}}, Readable: every},
		{Query: "deploy"}, {Query: "이사"}, {Query: "보일러 수리"}, {Query: "집"}, {Query: "deploy server bug deadline"},
		{Query: "coffee", Keywords: []string{"weekend"}}, {Query: "game", Filter: sqlite.Filter{Since: mid}},
		{Keywords: []string{"치킨"}}, {Query: "치킨 맥주 저녁", Filter: sqlite.Filter{Authors: []int64{some[0].AuthorID}}},
	}
	for _, r := range cases {
		r.Mode = Lexical
		terms := lexical.Terms(r.Query)
		q := &query{Request: r, svc: mem, text: r.Query}
		alts := q.keywordAlternatives()
		exact, err := db.Lexical(ctx, ftsExpr(terms, alts), r.Filter, 20)
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := q.memoryLexical(ctx, terms, alts)
		if err != nil || !ok {
			t.Fatalf("%+v: ok %v, %v", r, ok, err)
		}
		if len(got) < len(exact) {
			t.Errorf("%+v: %d hits in memory, FTS5 %d", r, len(got), len(exact))
		}
		if len(exact) == 0 {
			t.Errorf("%+v: FTS5 found nothing; the case tests nothing", r)
		}
		for i := range min(len(exact), len(got), 20) {
			e, g := exact[i], got[i]
			if math.Abs(e.Score-g.Score) > 1e-9*math.Abs(e.Score) {
				t.Errorf("%+v #%d: score %v, FTS5 %v", r, i, g.Score, e.Score)
				break
			}
			if e.MessageID != g.MessageID && e.Score != g.Score {
				t.Errorf("%+v #%d: message %d, FTS5 %d", r, i, g.MessageID, e.MessageID)
				break
			}
		}
	}
}

// syntheticDB imports a generated export into a fresh database.
func syntheticDB(t *testing.T, spec sample.Synthetic) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	paths, err := sample.WriteSynthetic(filepath.Join(t.TempDir(), "x"), spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range (&ingest.Importer{DB: db, Rules: segment.DefaultRules}).Import(ctx, paths) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	return db
}

// Writes by anyone reach the in-memory index before the next search.
func TestMemoryIndexFollowsChanges(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	kw := &index.Keywords{DB: db}
	if err := kw.Load(ctx); err != nil {
		t.Fatal(err)
	}
	s := &Service{DB: db, Keywords: kw, Config: DefaultConfig()}
	find := func(q string) []int64 {
		t.Helper()
		resp := run(t, s, Request{Query: q, Mode: Lexical, RankedMessages: true})
		return resp.RankedMessages
	}
	apply := func(b *searchd.Batch) {
		t.Helper()
		if _, err := db.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
	}
	apply(&searchd.Batch{Messages: []searchd.Message{m(1, general, alice, 0, "the lighthouse trip"), m(2, general, bob, time.Minute, "보일러 고장")}})
	if got := find("lighthouse"); len(got) != 1 || got[0] != 1 {
		t.Fatalf("after insert: %v", got)
	}
	edited := m(1, general, alice, 0, "the museum trip")
	edited.EditedAt = t0.Add(time.Hour).UnixMicro()
	apply(&searchd.Batch{Messages: []searchd.Message{edited}, Deletes: []int64{2}})
	if got := find("lighthouse"); len(got) != 0 {
		t.Errorf("an edited-away word is still found: %v", got)
	}
	if got := find("museum"); len(got) != 1 {
		t.Errorf("the edit is not found: %v", got)
	}
	if got := find("보일러"); len(got) != 0 {
		t.Errorf("a deleted message is still found: %v", got)
	}
	// Trimming the log after catching up loses nothing.
	if _, err := kw.Current(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.TrimTextChanges(ctx, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	apply(&searchd.Batch{Messages: []searchd.Message{m(3, games, bob, 2*time.Hour, "museum again")}})
	if got := find("museum"); len(got) != 2 {
		t.Errorf("after trimming: %v", got)
	}
	// An import logs its messages as well: the next search applies them.
	imported := m(6, general, bob, 4*time.Hour, "museum from an export")
	if _, err := db.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{imported}}, segment.DefaultRules,
		&sqlite.Checkpoint{Path: "x.json", Complete: true}); err != nil {
		t.Fatal(err)
	}
	if idx, err := kw.Current(ctx); err != nil || idx == nil {
		t.Fatalf("after an import: index %v, %v; want it current", idx, err)
	}
	if got := find("museum"); len(got) != 3 {
		t.Errorf("after an import: %v", got)
	}
	// A backlog larger than a search should apply loads the index again,
	// and keyword search runs on FTS5 until it has.
	kw.MaxCatchUp = 1
	apply(&searchd.Batch{Messages: []searchd.Message{m(7, general, bob, 5*time.Hour, "museum at night"),
		m(8, general, alice, 5*time.Hour+time.Minute, "museum closed")}})
	if idx, err := kw.Current(ctx); err != nil || idx != nil {
		t.Errorf("after 2 changes with MaxCatchUp 1: index %v, %v; want none while it reloads", idx, err)
	}
	if got := find("museum"); len(got) != 5 {
		t.Errorf("during the reload (FTS5): %v", got)
	}
	waitFor := time.Now().Add(5 * time.Second)
	for idx, _ := kw.Current(ctx); idx == nil; idx, _ = kw.Current(ctx) {
		if time.Now().After(waitFor) {
			t.Fatal("the index never reloaded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if kw.Len() != 5 {
		t.Errorf("reloaded index holds %d messages, want 5 (1, 3, 6, 7 and 8)", kw.Len())
	}
	kw.MaxCatchUp = 0
	// A channel filter brings the channel's public threads, not private ones.
	pub, priv := m(4, 201, alice, 3*time.Hour, "museum tickets"), m(5, 202, alice, 3*time.Hour, "museum secret")
	apply(&searchd.Batch{Channels: []searchd.Channel{{ID: games, Name: "games"}, {ID: 201, ParentID: games, Kind: "GuildPublicThread"},
		{ID: 202, ParentID: games, Kind: "GuildPrivateThread"}}, Messages: []searchd.Message{pub, priv}})
	resp := run(t, s, Request{Query: "museum", Mode: Lexical, RankedMessages: true, Filter: sqlite.Filter{Channels: []int64{games}}})
	slices.Sort(resp.RankedMessages)
	if !slices.Equal(resp.RankedMessages, []int64{3, 4}) {
		t.Errorf("channel filter with threads: %v, want 3 and 4", resp.RankedMessages)
	}
}

// A keyword score is told from the channels the audience may read:
// another channel full of the query's word changes no score of a search
// in #general (or its scores would tell how often the word is said
// there), unless the audience reads that channel too.
func TestKeywordScoresAreTheAudiences(t *testing.T) {
	ctx := context.Background()
	s := inMemory(t, setupWith(t, corpus))
	req := Request{Query: "boiler", Mode: Lexical, Filter: sqlite.Filter{Channels: []int64{general}}}
	scores := func(r Request) []float64 {
		var out []float64
		for _, res := range run(t, s, r).Results {
			out = append(out, res.Score)
		}
		return out
	}
	before := scores(req)
	if len(before) == 0 {
		t.Fatal("no hits: the test tells nothing")
	}
	var other []searchd.Message
	for i := range 100 {
		other = append(other, m(int64(5000+i), games, bob, time.Duration(i)*time.Minute, "boiler boiler boiler"))
	}
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: other}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if after := scores(req); !slices.Equal(after, before) {
		t.Errorf("scores in #general %v before another channel's messages, %v after: want the same", before, after)
	}
	req.Readable = []int64{general, games}
	if both := scores(req); slices.Equal(both, before) {
		t.Errorf("scores %v for an audience reading both channels: want them to count the other's messages", both)
	}
}

// A cursor is for the audience it was made for: their channels weigh the
// scores it pages through.
func TestCursorKeepsItsAudience(t *testing.T) {
	ctx := context.Background()
	s := inMemory(t, setupWith(t, corpus))
	req := Request{Query: "the", Mode: Lexical, Limit: 1, Filter: sqlite.Filter{Channels: []int64{general}}, Readable: []int64{general}}
	first := run(t, s, req)
	if first.NextCursor == "" {
		t.Fatal("no second page: the test tells nothing")
	}
	req.Cursor = first.NextCursor
	if _, err := s.Search(ctx, req); err != nil {
		t.Fatalf("the same audience's next page: %v", err)
	}
	req.Readable = []int64{general, games}
	if _, err := s.Search(ctx, req); err == nil {
		t.Error("a cursor made for one audience pages for another")
	}
}

// While the keyword index loads, FTS5 would rank keyword searches, and
// its bm25() counts every channel's messages: a search for an audience
// that reads fewer waits for the index and then fails plainly, in every
// mode with a keyword side; one over every channel is ranked by FTS5
// meanwhile.
func TestKeywordSearchWaitsForTheIndex(t *testing.T) {
	ctx := context.Background()
	base := setupWith(t, corpus)
	kw := &index.Keywords{DB: base.DB} // not loaded yet
	s := &Service{DB: base.DB, Matrix: base.Matrix, Embedder: base.Embedder, Config: base.Config, Keywords: kw,
		KeywordWait: 50 * time.Millisecond}
	inGeneral := sqlite.Filter{Channels: []int64{general}}
	for _, r := range []Request{
		{Query: "boiler", Mode: Lexical, Filter: inGeneral},
		{Query: "boiler", Mode: Hybrid, Filter: inGeneral},
		{Query: "boiler", Mode: Lexical, Filter: inGeneral, Readable: []int64{general, games}},
		{Query: "boiler", Mode: Lexical, Readable: []int64{general}, Keywords: []string{"boiler broke"}},
	} {
		if _, err := s.Search(ctx, r); !errors.Is(err, ErrKeywordsLoading) {
			t.Errorf("%+v while the index loads: %v, want ErrKeywordsLoading", r, err)
		}
	}
	if err := s.AwaitKeywords(ctx, nil, []int64{general}); !errors.Is(err, ErrKeywordsLoading) {
		t.Errorf("AwaitKeywords for #general while the index loads: %v, want ErrKeywordsLoading", err)
	}
	if err := s.AwaitKeywords(ctx, nil, nil); err != nil {
		t.Errorf("AwaitKeywords for every channel while the index loads: %v, want nil (FTS5 ranks)", err)
	}
	if r := run(t, s, Request{Query: "boiler", Mode: Lexical}); len(r.Results) == 0 {
		t.Error("every channel while the index loads: no results, want FTS5's")
	}
	s.KeywordWait = time.Minute
	loaded := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		loaded <- kw.Load(ctx)
	}()
	if r := run(t, s, Request{Query: "boiler", Mode: Lexical, Filter: inGeneral}); len(r.Results) == 0 {
		t.Error("#general once the index loaded: no results")
	}
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	if err := s.AwaitKeywords(ctx, []int64{general}, nil); err != nil {
		t.Errorf("AwaitKeywords once the index loaded: %v", err)
	}
}

// A keyword phrase needs word positions, which FTS5 checks, but is ranked
// with the audience's statistics as a word is: another channel full of it
// changes no score in #general, and a message holding its words out of
// order is not found.
func TestPhraseScoresAreTheAudiences(t *testing.T) {
	ctx := context.Background()
	s := inMemory(t, setupWith(t, append(slices.Clone(corpus), m(11, general, bob, 50*time.Hour, "it broke again, the boiler"))))
	req := Request{Query: "boiler", Keywords: []string{"boiler broke"}, Mode: Lexical, Filter: sqlite.Filter{Channels: []int64{general}}}
	hits := func(r Request) (ids []int64, scores []float64) {
		for _, res := range run(t, s, r).Results {
			ids, scores = append(ids, res.MessageID), append(scores, res.Score)
		}
		return ids, scores
	}
	ids, before := hits(req)
	if !slices.Equal(ids, []int64{1}) {
		t.Fatalf("the phrase in #general: %v, want message 1 alone", ids)
	}
	var other []searchd.Message
	for i := range 100 {
		other = append(other, m(int64(5000+i), games, bob, time.Duration(i)*time.Minute, "the boiler broke, boiler broke"))
	}
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: other}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if ids, after := hits(req); !slices.Equal(ids, []int64{1}) || !slices.Equal(after, before) {
		t.Errorf("the phrase in #general after another channel's: %v %v, want %v %v", ids, after, []int64{1}, before)
	}
	req.Readable = []int64{general, games}
	if _, both := hits(req); slices.Equal(both, before) {
		t.Errorf("scores %v for an audience reading both channels: want them to count the other's messages", both)
	}
	req.Filter, req.Readable = sqlite.Filter{}, []int64{general, games}
	if ids, _ := hits(req); len(ids) != 10 || slices.Contains(ids, 11) {
		t.Errorf("the phrase over both channels: %v, want ten hits holding it (a page), not message 11", ids)
	}
}
