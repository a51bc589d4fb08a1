package search

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/embed"
	"dsearch/searchd/embed/embedtest"
	"dsearch/searchd/index"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
	"dsearch/searchd/sqlite/sqlitetest"
)

var t0 = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	general, games = 100, 200
	alice, bob     = 1, 2
)

func m(id int64, ch int64, author int64, offset time.Duration, text string) searchd.Message {
	names := map[int64]string{alice: "alice", bob: "bob"}
	return searchd.Message{ID: id, ChannelID: ch, CreatedAt: t0.Add(offset).UnixMicro(), Content: text, Type: "Default",
		Author: searchd.Author{ID: author, Username: names[author]}}
}

// corpus: conversations hours apart, so each is its own segment.
var corpus = []searchd.Message{
	m(1, general, alice, 0, "the boiler broke this morning"),
	m(2, general, bob, time.Minute, "call a plumber to repair the heating pipes and the pressure valve"),
	m(3, general, alice, 2*time.Minute, "the radiator is cold"),
	m(4, general, bob, 5*time.Hour, "moving to a new apartment next month"),
	m(5, general, alice, 5*time.Hour+time.Minute, "the landlord wants a longer lease for the house"),
	m(6, games, bob, 10*time.Hour, "finished the game, the ending and the story were great"),
	m(7, games, alice, 10*time.Hour+time.Minute, "steam has the game on sale, boss level is hard"),
	m(8, general, bob, 20*time.Hour, "학교에서 보일러 수리 기사님이 오셨어"),
	m(9, general, alice, 30*time.Hour, "클로드 코드로 논문 그래프를 고쳤다, 심사 전에 표도 다시 그려야 해"),
	m(10, general, bob, 40*time.Hour, "pizza and beer for dinner at the restaurant"),
}

func setup(t *testing.T) *Service {
	t.Helper()
	return setupWith(t, corpus)
}

// setupWith is a service over the given messages, embedded with the
// fixture model.
func setupWith(t *testing.T, msgs []searchd.Message) *Service {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	if _, err := db.Apply(ctx, &searchd.Batch{Messages: msgs}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	model, err := embed.Load(dir, embed.Options{Backend: embed.Go})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	job := &index.Job{DB: db, Embedder: model, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := job.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	matrix, err := index.LoadMatrix(ctx, db, model.Dim())
	if err != nil {
		t.Fatal(err)
	}
	return &Service{DB: db, Matrix: matrix, Embedder: model, Config: DefaultConfig()}
}

// inMemory is s with the in-memory keyword index loaded: keyword search
// then runs there instead of FTS5.
func inMemory(t *testing.T, s *Service) *Service {
	t.Helper()
	kw := &index.Keywords{DB: s.DB}
	if err := kw.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &Service{DB: s.DB, Matrix: s.Matrix, Embedder: s.Embedder, Config: s.Config, Keywords: kw}
}

// bothIndexes runs a test over FTS5 and over the in-memory index.
func bothIndexes(t *testing.T, s *Service, test func(t *testing.T, s *Service)) {
	t.Run("fts5", func(t *testing.T) { test(t, s) })
	t.Run("memory", func(t *testing.T) { test(t, inMemory(t, s)) })
}

func run(t *testing.T, s *Service, r Request) *Response {
	t.Helper()
	resp, err := s.Search(context.Background(), r)
	if err != nil {
		t.Fatalf("%+v: %v", r, err)
	}
	return resp
}

// firstMessage is the first message of the top result's ranked list.
func top(resp *Response) int64 {
	if len(resp.Results) == 0 {
		return 0
	}
	return resp.Results[0].MessageID
}

func TestModes(t *testing.T) {
	s := setup(t)
	for _, mode := range []Mode{Pipeline, Semantic, Hybrid, Lexical} {
		t.Run(string(mode), func(t *testing.T) {
			resp := run(t, s, Request{Query: "the boiler broke", Mode: mode, RankedMessages: true})
			if len(resp.Results) == 0 {
				t.Fatal("no results")
			}
			if id := top(resp); id != 1 && id != 2 && id != 3 {
				t.Errorf("top result's message %d is not in the boiler conversation", id)
			}
			if !slices.Contains(resp.RankedMessages[:min(3, len(resp.RankedMessages))], 1) {
				t.Errorf("ranked messages %v: message 1 not in the top 3", resp.RankedMessages)
			}
			r := resp.Results[0]
			if r.ChannelID != general || len(r.Previews) == 0 || len(r.Authors) == 0 || r.StartAt == 0 {
				t.Errorf("result not decorated: %+v", r)
			}
			if mode == Hybrid {
				c := r.Components
				if c["lexical"].Rank == 0 || c["semantic"].Rank == 0 {
					t.Errorf("hybrid components %+v: want both ranks", c)
				}
			}
		})
	}
}

func TestFilters(t *testing.T) { bothIndexes(t, setup(t), testFilters) }

func testFilters(t *testing.T, s *Service) {
	for _, mode := range []Mode{Pipeline, Semantic, Hybrid, Lexical} {
		resp := run(t, s, Request{Query: "the game and the boiler", Mode: mode, Filter: sqlite.Filter{Channels: []int64{games}}, RankedMessages: true})
		for _, id := range resp.RankedMessages {
			if id != 6 && id != 7 {
				t.Errorf("%s: channel filter let message %d through", mode, id)
			}
		}
		resp = run(t, s, Request{Query: "the boiler", Mode: mode, Filter: sqlite.Filter{Since: t0.Add(time.Hour).UnixMicro(), Until: t0.Add(25 * time.Hour).UnixMicro()}, RankedMessages: true})
		for _, id := range resp.RankedMessages {
			if id < 4 || id > 8 {
				t.Errorf("%s: time filter let message %d through", mode, id)
			}
		}
		if mode == Lexical {
			resp = run(t, s, Request{Query: "the", Mode: mode, Filter: sqlite.Filter{Authors: []int64{bob}}, RankedMessages: true})
			for _, id := range resp.RankedMessages {
				if corpus[id-1].Author.ID != bob {
					t.Errorf("author filter let message %d through", id)
				}
			}
		} else {
			// A segment passes the author filter when the author spoke in it.
			resp = run(t, s, Request{Query: "dinner", Mode: mode, Filter: sqlite.Filter{Authors: []int64{alice}}})
			for _, r := range resp.Results {
				if r.SegmentID == segmentOf(t, s, 10) {
					t.Errorf("%s: author filter let bob's dinner segment through", mode)
				}
			}
		}
	}
}

func segmentOf(t *testing.T, s *Service, msg int64) int64 {
	ms, err := s.DB.Message(context.Background(), msg)
	if err != nil {
		t.Fatal(err)
	}
	return ms.SegmentID
}

func TestKeywordsFallbackSynonyms(t *testing.T) {
	s := setup(t)
	resp := run(t, s, Request{Query: "video games", Keywords: []string{"steam"}})
	if resp.KeywordFallback || len(resp.Results) != 1 || resp.Results[0].SegmentID != segmentOf(t, s, 7) {
		t.Errorf("keyword steam: fallback %v, %d results", resp.KeywordFallback, len(resp.Results))
	}
	resp = run(t, s, Request{Query: "video games", Keywords: []string{"xyzzy"}})
	if !resp.KeywordFallback || len(resp.Results) == 0 {
		t.Errorf("unknown keyword: fallback %v, %d results; want the fallback", resp.KeywordFallback, len(resp.Results))
	}
	// The fixture model reads little of "graph fix": without a mode it
	// would be searched in hybrid mode, not the pipeline tested here.
	resp = run(t, s, Request{Query: "graph fix", Keywords: []string{"claude"}, Mode: Pipeline})
	if !resp.KeywordFallback {
		t.Error("claude matched without synonyms")
	}
	s.Config.Synonyms = map[string][]string{"claude": {"클로드", "클코"}}
	resp = run(t, s, Request{Query: "graph fix", Keywords: []string{"Claude"}, Mode: Pipeline})
	if resp.KeywordFallback || len(resp.Results) != 1 || resp.Results[0].SegmentID != segmentOf(t, s, 9) {
		t.Errorf("claude → 클로드: fallback %v, results %+v", resp.KeywordFallback, resp.Results)
	}
}

func TestKoreanAndHostileQueries(t *testing.T) { bothIndexes(t, setup(t), testKoreanAndHostile) }

func testKoreanAndHostile(t *testing.T, s *Service) {
	// 학교 and 보일러 appear only inside longer word forms.
	for _, q := range []string{"학교", "보일러", "기사님"} {
		resp := run(t, s, Request{Query: q, Mode: Lexical, RankedMessages: true})
		if len(resp.RankedMessages) != 1 || resp.RankedMessages[0] != 8 {
			t.Errorf("%s: %v, want message 8", q, resp.RankedMessages)
		}
	}
	for _, q := range []string{`"`, `" OR *`, `boiler" NEAR(a b) ^text:x`, `text:boiler AND`, `(((`, `-boiler`, `학교" OR "`} {
		if _, err := s.Search(context.Background(), Request{Query: q, Mode: Lexical}); err != nil {
			t.Errorf("query %q: %v", q, err)
		}
	}
	resp := run(t, s, Request{Query: `boiler" OR "pizza`, Mode: Lexical, RankedMessages: true})
	if !slices.Contains(resp.RankedMessages, 1) {
		t.Errorf("quoted words were not searched as words: %v", resp.RankedMessages)
	}
}

func TestCursor(t *testing.T) {
	s := setup(t)
	ctx := context.Background()
	req := Request{Query: "the", Mode: Lexical, Limit: 2}
	p1 := run(t, s, req)
	if p1.NextCursor == "" || len(p1.Results) != 2 {
		t.Fatalf("page 1: %+v", p1)
	}
	req.Cursor = p1.NextCursor
	p2 := run(t, s, req)
	if len(p2.Results) == 0 || p2.Results[0].MessageID == p1.Results[0].MessageID || p2.Results[0].MessageID == p1.Results[1].MessageID {
		t.Errorf("page 2 repeats page 1")
	}
	bad := func(name string, r Request, want string) {
		t.Helper()
		_, err := s.Search(ctx, r)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an input error with %q", name, err, want)
		}
	}
	bad("other query", Request{Query: "boiler", Mode: Lexical, Limit: 2, Cursor: p1.NextCursor}, "different query")
	bad("other mode", Request{Query: "the", Mode: Pipeline, Limit: 2, Cursor: p1.NextCursor}, "different query")
	bad("other filter", Request{Query: "the", Mode: Lexical, Limit: 2, Cursor: p1.NextCursor, Filter: sqlite.Filter{Authors: []int64{bob}}}, "different query")
	bad("malformed", Request{Query: "the", Mode: Lexical, Cursor: "not a cursor!"}, "invalid cursor")
	version, _ := s.DB.IndexVersion(ctx)
	bad("past the end", Request{Query: "the", Mode: Lexical, Cursor: EncodeCursor(Cursor{Version: version, Fingerprint: fingerprint(&Request{Query: "the", Mode: Lexical}), Offset: 500})}, "past the last")
	bad("zero offset", Request{Query: "the", Mode: Lexical, Cursor: EncodeCursor(Cursor{Version: version, Fingerprint: fingerprint(&Request{Query: "the", Mode: Lexical}), Offset: 0})}, "out of range")
	// New data invalidates every cursor.
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{m(11, general, bob, 50*time.Hour, "the end")}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	bad("new data", Request{Query: "the", Mode: Lexical, Limit: 2, Cursor: p1.NextCursor}, "messages were added, edited or deleted since this cursor was made; start again")
}

func TestLimits(t *testing.T) {
	s := setup(t)
	many := make([]int64, MaxFilterIDs+1)
	for _, r := range []Request{
		{Query: "", Mode: Pipeline},
		{Query: "x", Limit: MaxLimit + 1},
		{Query: "x", Limit: -1},
		{Query: "x", Mode: "fuzzy"},
		{Query: "x", Filter: sqlite.Filter{Authors: many}},
		{Query: "x", Filter: sqlite.Filter{Channels: many}},
		{Query: "x", Filter: sqlite.Filter{Since: 10, Until: 5}},
		{Query: strings.Repeat("x", 2000)},
		{Query: "x", Keywords: make([]string, MaxKeywords+1)},
	} {
		_, err := s.Search(context.Background(), r)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%+v: %v, want an input error", r, err)
		}
	}
	// Lexical needs no model; the others say there is none.
	bare := &Service{DB: s.DB, Config: DefaultConfig()}
	if _, err := bare.Search(context.Background(), Request{Query: "boiler", Mode: Lexical}); err != nil {
		t.Error(err)
	}
	if _, err := bare.Search(context.Background(), Request{Query: "boiler", Mode: Pipeline}); !errors.Is(err, ErrNoModel) {
		t.Errorf("no model: %v", err)
	}
	if r, err := bare.Search(context.Background(), Request{Query: "boiler"}); err != nil || r.Mode != Lexical {
		t.Errorf("default mode without a model: %+v, %v", r, err)
	}
}

func TestFloorAndNames(t *testing.T) {
	s := setup(t)
	s.Config.MinSimilarity = 0.999
	resp := run(t, s, Request{Query: "the boiler broke"})
	if !resp.NoConfidentResults || len(resp.Results) != 0 {
		t.Errorf("floor: %+v", resp)
	}
	s.Config.MinSimilarity = 0
	// "bob" is an author: taken out of the text, his messages weighed up.
	q := &query{Request: Request{Query: "what did bob say about the boiler"}, svc: s, text: "what did bob say about the boiler"}
	if err := q.resolveNames(context.Background()); err != nil {
		t.Fatal(err)
	}
	if q.text != "what did say about the boiler" || !q.named[bob] || q.named[alice] {
		t.Errorf("names: text %q, named %v", q.text, q.named)
	}
	plain := run(t, s, Request{Query: "the", Mode: Lexical, RankedMessages: true})
	named := run(t, s, Request{Query: "alice the", Mode: Lexical, RankedMessages: true})
	if corpus[plain.RankedMessages[0]-1].Author.ID != bob || corpus[named.RankedMessages[0]-1].Author.ID != alice {
		t.Errorf("naming alice should bring her messages first: %v → %v", plain.RankedMessages, named.RankedMessages)
	}
	// A caller that took the name out itself (the question pipeline) says
	// whom it named: the same boost.
	told := run(t, s, Request{Query: "the", Named: []int64{alice}, Mode: Lexical, RankedMessages: true})
	if !slices.Equal(told.RankedMessages, named.RankedMessages) {
		t.Errorf("Named: %v, want %v as with the name in the text", told.RankedMessages, named.RankedMessages)
	}
}

func TestClassify(t *testing.T) {
	for q, want := range map[string]QueryKind{
		`error "connection refused"`:                 Exact,
		"ECONNREFUSED":                               Exact,
		"https://example.com/a":                      Exact,
		"v1.2 release":                               Exact,
		"Death Stranding":                            Exact,
		"when did Caroline go to the support group?": Conceptual,
		"이사 간다고 한 게 언제였지":                            Conceptual,
		"boiler repair cost":                         Mixed,
		"the iPhone story":                           Exact,
		// A sentence with a quote, a number or a date asks for a meaning.
		`Mother often says, "You are a very lazy boy, Min-ho!"`: Conceptual,
		"What did Melanie paint on October 13, 2023?":           Conceptual,
		`캘리포니아 주에 있는 한 마을에서는 "운전자는 300피트 전방에서 세워야 한다"는 법안을 통과시켰다.`: Conceptual,
	} {
		if got := Classify(q); got != want {
			t.Errorf("Classify(%q) = %s, want %s", q, got, want)
		}
	}
}

func TestShortSegmentFoundByKeyword(t *testing.T) {
	s := setup(t)
	ctx := context.Background()
	short := m(20, 300, alice, 60*time.Hour, "클코 ㅋㅋ")
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{short}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	// Embed the new message (not the segment: under segment.MinTextUnits).
	job := &index.Job{DB: s.DB, Embedder: s.Embedder.(index.Embedder), Matrix: s.Matrix, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := job.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Matrix.Vector(segmentOf(t, s, 20)) != nil {
		t.Fatal("the short segment got a vector: this test no longer reaches segments without one")
	}
	resp := run(t, s, Request{Query: "graph fix", Keywords: []string{"클코"}, Mode: Pipeline}) // read little by the fixture model: see TestKeywordsFallbackSynonyms
	if resp.KeywordFallback || len(resp.Results) != 1 || resp.Results[0].SegmentID != segmentOf(t, s, 20) {
		t.Errorf("short keyword segment: fallback %v, results %+v", resp.KeywordFallback, resp.Results)
	}
}

func TestOneSyllableKorean(t *testing.T) { bothIndexes(t, setup(t), testOneSyllableKorean) }

func testOneSyllableKorean(t *testing.T, s *Service) {
	ctx := context.Background()
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{
		m(30, general, bob, 70*time.Hour, "오늘은 집에 일찍 갈게"),
	}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	resp := run(t, s, Request{Query: "집", Mode: Lexical, RankedMessages: true})
	if !slices.Contains(resp.RankedMessages, 30) {
		t.Errorf("집 did not find 집에: %v", resp.RankedMessages)
	}
}

// A cursor outlives the embedding job: on a new server it writes vectors
// for hours, and new vectors are not new messages.
func TestCursorOutlivesEmbedding(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	if _, err := db.Apply(ctx, &searchd.Batch{Messages: corpus}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	s := &Service{DB: db, Config: DefaultConfig()}
	req := Request{Query: "the", Mode: Lexical, Limit: 2}
	p1 := run(t, s, req)
	dir := t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	model, err := embed.Load(dir, embed.Options{Backend: embed.Go})
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	job := &index.Job{DB: db, Embedder: model, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := job.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if c, err := db.EmbeddingCounts(ctx); err != nil || c.SegmentsDone == 0 {
		t.Fatalf("the job embedded nothing: %+v %v", c, err)
	}
	req.Cursor = p1.NextCursor
	p2 := run(t, s, req)
	for _, r := range p2.Results {
		if r.SegmentID == p1.Results[0].SegmentID || r.SegmentID == p1.Results[1].SegmentID {
			t.Errorf("page 2 repeats segment %d of page 1", r.SegmentID)
		}
	}
}

// A later page skips what earlier pages showed, so results that moved
// (new vectors rank segments anew) are neither repeated nor skipped.
func TestCursorPageSkipsShown(t *testing.T) {
	results := func(ids ...int64) []Result {
		out := make([]Result, len(ids))
		for i, id := range ids {
			out[i].SegmentID = id
		}
		return out
	}
	ids := func(rs []Result) []int64 {
		var out []int64
		for _, r := range rs {
			out = append(out, r.SegmentID)
		}
		return out
	}
	var c Cursor
	p1, more, err := c.Page(results(1, 2, 3, 4, 5), 2, BySegment)
	if err != nil || !more || !slices.Equal(ids(p1), []int64{1, 2}) {
		t.Fatalf("page 1: %v %v %v", ids(p1), more, err)
	}
	// Between pages 3 rose to the top and 6 appeared.
	p2, more, err := c.Page(results(3, 1, 6, 2, 4, 5), 2, BySegment)
	if err != nil || !more || !slices.Equal(ids(p2), []int64{3, 6}) {
		t.Errorf("page 2: %v %v %v, want [3 6]", ids(p2), more, err)
	}
	p3, more, err := c.Page(results(3, 1, 6, 2, 4, 5), 2, BySegment)
	if err != nil || more || !slices.Equal(ids(p3), []int64{4, 5}) {
		t.Errorf("page 3: %v %v %v, want [4 5], the last", ids(p3), more, err)
	}
}

// A name is recognized only for authors seen in the filter's channels: a
// name seen only where the asker cannot read says nothing about anyone.
func TestNamesOnlyFromReadableChannels(t *testing.T) {
	const carol, secret = 3, 300
	msgs := append(slices.Clone(corpus), searchd.Message{ID: 11, ChannelID: secret, CreatedAt: t0.Add(50 * time.Hour).UnixMicro(),
		Content: "the boiler budget is approved", Type: "Default", Author: searchd.Author{ID: carol, Username: "carol", Nickname: "caz"}})
	s := setupWith(t, msgs)
	for _, tc := range []struct {
		channels []int64
		named    bool
	}{{nil, true}, {[]int64{secret}, true}, {[]int64{general, games}, false}} {
		for _, name := range []string{"carol", "caz"} {
			text := "what did " + name + " say about the boiler"
			q := &query{Request: Request{Query: text, Filter: sqlite.Filter{Channels: tc.channels}}, svc: s, text: text}
			if err := q.resolveNames(context.Background()); err != nil {
				t.Fatal(err)
			}
			if q.named[carol] != tc.named || strings.Contains(q.text, name) == tc.named {
				t.Errorf("channels %v, %q: named %v, text %q; want named %v", tc.channels, name, q.named, q.text, tc.named)
			}
		}
	}
}
