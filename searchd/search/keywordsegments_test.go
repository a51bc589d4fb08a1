package search

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/export"
	"dsearch/searchd/index"
	"dsearch/searchd/ingest"
	"dsearch/searchd/lexical"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
	"dsearch/searchd/sqlite/sqlitetest"
)

// evalDir holds the evaluation exports (../shared/eval beside the clone).
var evalDir = filepath.Join("..", "..", "..", "shared", "eval")

// withMemberships is s with the keyword index and the memberships loaded:
// a required keyword's segments then come from memory.
func withMemberships(t *testing.T, s *Service) *Service {
	t.Helper()
	s = inMemory(t, s)
	s.Memberships = &index.Memberships{DB: s.DB}
	if err := s.Memberships.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// sameKeywordSegments checks a required keyword's segments from memory
// against SQLite's for the same messages: those the keyword index lists
// for the keyword, that SQLite's filter admits, in the segments SQLite
// stores them in. None that FTS5 finds for the keyword may be missing;
// the index finds more where its words are not unicode61's (extra). It
// returns how many segments there are.
func sameKeywordSegments(t *testing.T, s *Service, alts [][]lexical.Term, f sqlite.Filter) (n, extra int) {
	t.Helper()
	ctx := context.Background()
	if r, err := s.Memberships.Current(ctx); err != nil || r == nil {
		t.Fatalf("the memberships are not loaded (%v): nothing in memory to compare", err)
	}
	set, err := s.findKeywordSegments(ctx, alts, f)
	if err != nil {
		t.Fatal(err)
	}
	got := setMap(set)
	idx, err := s.Keywords.Current(ctx)
	if err != nil || idx == nil {
		t.Fatalf("the keyword index is not loaded (%v)", err)
	}
	want, err := s.DB.SegmentsOfMessages(ctx, idx.Holding(alts, lexical.Filter{}, nil), f)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("%v %+v: from memory segments %v, SQLite %v", alts, f, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	// While the memberships load, SQLite maps the index's messages.
	loading := &Service{DB: s.DB, Config: s.Config, Keywords: s.Keywords}
	if meanwhile, err := loading.findKeywordSegments(ctx, alts, f); err != nil || !maps.Equal(setMap(meanwhile), want) {
		t.Errorf("%v %+v: without the memberships %d segments (%v), SQLite %d", alts, f, len(setMap(meanwhile)), err, len(want))
	}
	fts, err := s.DB.SegmentsMatching(ctx, alternativesExpr(alts), f)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range fts {
		if !got[id] {
			t.Errorf("%v %+v: FTS5 finds segment %d, memory does not", alts, f, id)
		}
	}
	return len(want), len(got) - len(fts)
}

// evalMessages imports an evaluation set's exports and returns its
// messages as exported.
func evalMessages(t *testing.T, db *sqlite.DB, dir string) []searchd.Message {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, r := range (&ingest.Importer{DB: db, Rules: segment.DefaultRules}).Import(context.Background(), files) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	var out []searchd.Message
	for _, path := range files {
		_, msgs, err := export.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, msgs...)
	}
	return out
}

func evalQueries(t *testing.T, path string, most int) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && len(out) < most {
		var q struct{ Query string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, q.Query)
	}
	return out
}

// keywordCases are the keyword alternatives and filters searches ask
// with, from a query's words: one keyword, two (either), two together;
// no filter, a channel, an author, a time, channels with an unknown one,
// only an unknown channel.
func keywordCases(r *rand.Rand, query string, msgs []searchd.Message) (alts [][][]lexical.Term, filters []sqlite.Filter) {
	terms := lexical.Terms(query)
	if len(terms) == 0 {
		return nil, nil
	}
	a, b := terms[r.IntN(len(terms))], terms[r.IntN(len(terms))]
	alts = [][][]lexical.Term{{{a}}, {{a}, {b}}, {{a, b}}}
	m := msgs[r.IntN(len(msgs))]
	mid := msgs[r.IntN(len(msgs))].CreatedAt
	filters = []sqlite.Filter{{}, {Channels: []int64{m.ChannelID}}, {Authors: []int64{m.Author.ID}}, {Since: mid},
		{Channels: []int64{m.ChannelID, -1}, Until: mid}, {Channels: []int64{-1}}}
	return alts, filters
}

// A required keyword's segments from memory are SQLite's, on every
// evaluation set's queries (their words as keywords, with filters), and
// still after live changes: new messages at the end and in the middle of
// a channel's history (which re-segments it: messages move between
// segments), edits that add and remove a keyword, deletions.
func TestKeywordSegmentsMatchSQL(t *testing.T) {
	sets, _ := filepath.Glob(filepath.Join(evalDir, "*", "queries.jsonl"))
	if len(sets) == 0 {
		t.Skip("no evaluation data (../shared/eval beside the clone)")
	}
	movedAny := 0
	for _, set := range sets {
		dir := filepath.Dir(set)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			db := sqlitetest.Open(t)
			msgs := evalMessages(t, db, dir)
			s := withMemberships(t, &Service{DB: db, Config: DefaultConfig()})
			queries := evalQueries(t, set, 40)
			r := rand.New(rand.NewPCG(2, uint64(len(queries))))
			check := func() (found int) {
				cases, differ, admitted := 0, 0, 0
				for _, q := range queries {
					alts, filters := keywordCases(r, q, msgs)
					for _, f := range filters {
						admitted += sameFilterSegments(t, s, f)
					}
					for _, a := range alts {
						for _, f := range filters {
							n, extra := sameKeywordSegments(t, s, a, f)
							found += n
							cases++
							if extra > 0 {
								differ++
							}
						}
					}
				}
				t.Logf("%d cases, %d segments; %d cases with segments FTS5 does not find; filters alone %d segments", cases, found, differ, admitted)
				if admitted == 0 {
					t.Error("no filter admitted a segment: nothing was compared")
				}
				return found
			}
			if check() == 0 {
				t.Fatal("no query's words are in any segment: nothing was compared")
			}
			moved := changeLive(t, s, r, msgs, queries)
			t.Logf("the changes moved %d messages to another segment", moved)
			movedAny += moved
			if check() == 0 {
				t.Fatal("after the changes: nothing was compared")
			}
		})
	}
	if movedAny == 0 {
		t.Error("the changes moved no message to another segment: re-segmentation was not tried")
	}
}

// changeLive applies live changes, one batch each, and returns how many
// messages that stayed moved to another segment: messages filling the
// quiet hour between two conversations of a channel (which re-segments
// the channel from there: the later conversation's messages move), a new
// message just after another, edits that bring a query's words and that
// take them away, deletions.
func changeLive(t *testing.T, s *Service, r *rand.Rand, msgs []searchd.Message, queries []string) (moved int) {
	t.Helper()
	ctx := context.Background()
	ids := make([]int64, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	before, err := s.DB.SegmentsOf(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	nextID := slices.Max(ids) + 1
	apply := func(b *searchd.Batch) {
		t.Helper()
		if _, err := s.DB.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Bridges: the gaps of 30 minutes to 6 hours, filled every 20 minutes.
	inTime := slices.Clone(msgs)
	slices.SortFunc(inTime, func(a, b searchd.Message) int {
		return cmp.Or(cmp.Compare(a.ChannelID, b.ChannelID), cmp.Compare(a.CreatedAt, b.CreatedAt))
	})
	const minute = int64(time.Minute / time.Microsecond)
	bridges := 0
	for i := 1; i < len(inTime) && bridges < 10; i++ {
		prev, next := inTime[i-1], inTime[i]
		if gap := next.CreatedAt - prev.CreatedAt; prev.ChannelID != next.ChannelID || gap <= 30*minute || gap > 360*minute {
			continue
		}
		var b searchd.Batch
		for at := prev.CreatedAt + 20*minute; at < next.CreatedAt; at += 20 * minute {
			n := prev
			n.ID, n.CreatedAt, n.EditedAt, n.ReplyToID = nextID, at, 0, 0
			n.Content = queries[r.IntN(len(queries))]
			nextID++
			b.Messages = append(b.Messages, n)
		}
		apply(&b)
		bridges++
	}
	var deleted []int64
	for range 100 {
		m := msgs[r.IntN(len(msgs))]
		var b searchd.Batch
		switch r.IntN(4) {
		case 0: // a new message just after another
			n := m
			n.ID, n.CreatedAt, n.EditedAt, n.ReplyToID = nextID, m.CreatedAt+1, 0, 0
			n.Content = m.Content + " " + queries[r.IntN(len(queries))]
			nextID++
			b.Messages = append(b.Messages, n)
		case 1: // an edit that brings a query's words
			m.Content = queries[r.IntN(len(queries))] + " " + queries[r.IntN(len(queries))]
			m.EditedAt = m.CreatedAt + 60*minute
			b.Messages = append(b.Messages, m)
		case 2: // an edit that leaves few words
			m.Content, m.EditedAt = "ok", m.CreatedAt+60*minute
			b.Messages = append(b.Messages, m)
		case 3:
			b.Deletes = append(b.Deletes, m.ID)
			deleted = append(deleted, m.ID)
		}
		apply(&b)
	}
	after, err := s.DB.SegmentsOf(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for id, seg := range before {
		if now, ok := after[id]; ok && now != seg && !slices.Contains(deleted, id) {
			moved++
		}
	}
	return moved
}

// A required keyword's segments from memory honour the filter: a
// channel's segments only (with its public threads, never a private
// thread it does not name), an author's, a time's. Dropping the filter
// anywhere on the way fails here.
func TestKeywordSegmentsHonourFilters(t *testing.T) {
	const public, private = 300, 301
	msgs := append(slices.Clone(corpus),
		m(20, general, bob, 60*time.Hour, "the new game tonight, anyone?"),
		m(21, public, alice, 61*time.Hour, "a game in the public thread"),
		m(22, private, alice, 62*time.Hour, "a secret game in the private thread"))
	ctx := context.Background()
	db := sqlitetest.Open(t)
	b := &searchd.Batch{Channels: []searchd.Channel{{ID: general, Name: "general"}, {ID: games, Name: "games"},
		{ID: public, ParentID: general, Name: "public", Kind: "GuildPublicThread"},
		{ID: private, ParentID: general, Name: "private", Kind: "GuildPrivateThread"}}, Messages: msgs}
	if _, err := db.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	s := withMemberships(t, &Service{DB: db, Config: DefaultConfig()})
	segs, err := db.SegmentsOf(ctx, []int64{6, 7, 20, 21, 22})
	if err != nil {
		t.Fatal(err)
	}
	game := [][]lexical.Term{{{Text: "game"}}}
	for _, c := range []struct {
		f    sqlite.Filter
		want []int64 // messages whose segments are admitted
	}{
		{sqlite.Filter{}, []int64{6, 7, 20, 21, 22}},
		{sqlite.Filter{Channels: []int64{general}}, []int64{20, 21}},
		{sqlite.Filter{Channels: []int64{private}}, []int64{22}},
		{sqlite.Filter{Channels: []int64{games}}, []int64{6, 7}},
		{sqlite.Filter{Authors: []int64{alice}}, []int64{7, 21, 22}},
		{sqlite.Filter{Since: t0.Add(60 * time.Hour).UnixMicro(), Until: t0.Add(61 * time.Hour).UnixMicro()}, []int64{20, 21}},
		{sqlite.Filter{Channels: []int64{general}, Authors: []int64{alice}}, []int64{21}},
	} {
		want := map[int64]bool{}
		for _, id := range c.want {
			want[segs[id]] = true
		}
		set, err := s.findKeywordSegments(ctx, game, c.f)
		if err != nil {
			t.Fatal(err)
		}
		got := setMap(set)
		if !maps.Equal(got, want) {
			t.Errorf("%+v: segments %v, want those of messages %v: %v", c.f, slices.Sorted(maps.Keys(got)), c.want, slices.Sorted(maps.Keys(want)))
		}
		if _, extra := sameKeywordSegments(t, s, game, c.f); extra != 0 {
			t.Errorf("%+v: %d segments FTS5 does not find", c.f, extra)
		}
		// The filter alone (an author or a time from memory) admits
		// every segment with the keyword, and none SQLite does not.
		plain, err := s.segmentsMatching(ctx, 0, c.f)
		if err != nil {
			t.Fatal(err)
		}
		for id := range want {
			if plain != nil && !plain.has(id) {
				t.Errorf("%+v: the filter alone does not admit segment %d", c.f, id)
			}
		}
		sameFilterSegments(t, s, c.f)
	}
}

// sameFilterSegments checks a filter's segments from memory against
// SQLite's for the messages the keyword index holds (those spoken:
// Discord's notices are no author's words), and that memory admits no
// segment SQLite's filter does not. It returns how many there are.
func sameFilterSegments(t *testing.T, s *Service, f sqlite.Filter) int {
	t.Helper()
	ctx := context.Background()
	version, err := s.DB.IndexVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	set, err := s.segmentsMatching(ctx, version, f)
	if err != nil {
		t.Fatal(err)
	}
	got := setMap(set)
	list, err := s.DB.SegmentsMatching(ctx, "", f)
	if err != nil {
		t.Fatal(err)
	}
	sql := setMap(segmentSetOf(list))
	for id := range got {
		if !sql[id] {
			t.Errorf("%+v: memory admits segment %d, SQLite's filter does not", f, id)
		}
	}
	if len(f.Authors) == 0 && f.Since == 0 && f.Until == 0 {
		return len(got) // channels alone: SQLite's own answer
	}
	idx, err := s.Keywords.Current(ctx)
	if err != nil || idx == nil {
		t.Fatalf("the keyword index is not loaded (%v)", err)
	}
	want, err := s.DB.SegmentsOfMessages(ctx, idx.Admitted(lexical.Filter{}, nil), f)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("%+v: from memory %d segments, SQLite %d", f, len(got), len(want))
	}
	return len(want)
}

// A search with a keyword finds a message stored after the memberships
// loaded, in its segment, from memory: the memberships follow the log.
func TestKeywordSegmentsFollowNewMessages(t *testing.T) {
	s := withMemberships(t, setup(t))
	req := Request{Query: "lasagna recipe", Keywords: []string{"lasagna"}, Mode: Pipeline}
	if resp := run(t, s, req); !resp.KeywordFallback {
		t.Fatalf("before the message: want the keyword fallback, got %+v", resp)
	}
	if _, err := s.DB.Apply(context.Background(), &searchd.Batch{Messages: []searchd.Message{
		m(11, games, bob, 50*time.Hour, "my lasagna recipe needs more cheese tonight"),
	}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	alts := [][]lexical.Term{{{Text: "lasagna"}}}
	if n, _ := sameKeywordSegments(t, s, alts, sqlite.Filter{}); n != 1 {
		t.Errorf("%d segments hold the new message's keyword, want 1", n)
	}
	if resp := run(t, s, req); resp.KeywordFallback {
		t.Errorf("after the message: the keyword fallback, want its segment searched")
	}
}
