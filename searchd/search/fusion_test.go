package search

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
)

// Fusion follows each retriever's confidence: a candidate far above its
// own list's others beats the first of a flat list, where rank fusion
// called them even.
func TestFuseByZScore(t *testing.T) {
	q := &query{svc: &Service{Config: DefaultConfig()}}
	lex := []candidate{{1, 2.00}, {2, 1.99}, {3, 1.98}, {4, 1.97}, {5, 1.96}} // BM25 of a few common words
	sem := []candidate{{9, 0.95}, {8, 0.61}, {7, 0.60}, {6, 0.60}, {5, 0.59}}
	scores := q.fuse(lex, sem)
	ids := make([]int64, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int64) int { return cmp.Or(cmp.Compare(scores[b], scores[a]), cmp.Compare(a, b)) })
	if ids[0] != 9 {
		t.Errorf("fused order %v: want 9, far above the semantic list's rest, first", ids)
	}
	if len(ids) != 9 {
		t.Errorf("fused %d candidates, want the 9 of both lists", len(ids))
	}
	// By default a lexical z counts three quarters of a semantic one: of
	// two candidates that stand out of their lists alike, the one found
	// by meaning comes first.
	alike := q.fuse([]candidate{{1, 10}, {2, 0}, {3, 0}, {4, 0}}, []candidate{{9, 0.9}, {8, 0.5}, {7, 0.5}, {6, 0.5}})
	if alike[9]-alike[1] < 0.2*alike[9] {
		t.Errorf("equal standouts: lexical %.3f, semantic %.3f; want the semantic one higher", alike[1], alike[9])
	}
	// Weights scale a retriever's part.
	q.svc.Config.SemanticWeight = 0
	if s := q.fuse(lex, sem); s[9] != 0 || s[1] <= s[2] {
		t.Errorf("semantic weight 0: %v", s)
	}
	if z := zScores([]candidate{{1, 3}, {2, 3}}); z[0] != 0 || z[1] != 0 {
		t.Errorf("equal scores: z %v, want 0", z)
	}
}

// An exact query (a word or two) asks for its words: the candidates
// holding them come first, though the semantic side is surer of others.
func TestFusedOrderExact(t *testing.T) {
	scores := map[int64]float64{1: 3, 2: -0.5, 3: 1, 4: 0.2}
	hit := func(id int64) bool { return id == 2 || id == 4 }
	if got := fusedOrder(scores, hit, false); !slices.Equal(got, []int64{1, 3, 4, 2}) {
		t.Errorf("by score: %v", got)
	}
	if got := fusedOrder(scores, hit, true); !slices.Equal(got, []int64{4, 2, 1, 3}) {
		t.Errorf("exact: %v, want the hits 4, 2 first", got)
	}
}

// Through Search: a word asked for alone finds the message holding it
// first in hybrid mode. (In this small corpus the semantic side agrees, so
// this checks the path end to end; TestFusedOrderExact is what fails if
// the exact rule goes.)
func TestHybridExactQueryKeepsItsWords(t *testing.T) {
	s := setup(t)
	resp := run(t, s, Request{Query: "보일러", Mode: Hybrid, RankedMessages: true})
	if len(resp.Results) == 0 {
		t.Fatal("no results")
	}
	if _, ok := resp.Results[0].Components["lexical"]; !ok || resp.RankedMessages[0] != 8 {
		t.Errorf("top result %+v, messages %v: want message 8, the one holding 보일러", resp.Results[0], resp.RankedMessages)
	}
}

// A query the model cannot read: its semantic list stands out from itself
// as a readable query's does, so only the reading tells. The lexical
// candidates then come first, in lexical order, the semantic side adding
// nothing to them; the semantic candidates lexical did not find follow, in
// semantic order.
func TestFuseUnread(t *testing.T) {
	q := &query{svc: &Service{Config: DefaultConfig()}, unread: true}
	lex := []candidate{{1, 9.0}, {2, 8.5}, {3, 4.0}, {4, 3.9}}
	sem := []candidate{{9, 0.95}, {4, 0.80}, {8, 0.60}, {7, 0.59}, {3, 0.58}}
	isHit := func(id int64) bool { return id <= 4 }
	got := fusedOrder(q.fuse(lex, sem), isHit, q.unread)
	if want := []int64{1, 2, 3, 4, 9, 8, 7}; !slices.Equal(got, want) {
		t.Errorf("unread: fused order %v, want %v", got, want)
	}
	// Read, the same lists fuse: 9 and 4, far above the semantic rest,
	// come before lexical's weaker hits.
	q.unread = false
	if got := fusedOrder(q.fuse(lex, sem), isHit, false); slices.Index(got, 9) > slices.Index(got, 3) || slices.Index(got, 4) > slices.Index(got, 3) {
		t.Errorf("read: fused order %v, want 9 and 4 before 3", got)
	}
}

// readingEmbedder is an Embedder that reads nothing of what it is asked.
type readingEmbedder struct {
	Embedder
	reading float64
}

func (e readingEmbedder) Reading(string) (float64, error) { return e.reading, nil }

// Through Search: a query of plain words the model cannot read ranks by
// its words in hybrid mode, and the response says so.
func TestHybridUnreadQuery(t *testing.T) {
	s := setup(t)
	req := Request{Query: "pizza plumber landlord lease", Mode: Hybrid, RankedMessages: true}
	lex := run(t, s, Request{Query: req.Query, Mode: Lexical, RankedMessages: true})
	read := run(t, s, req)
	if read.Unread || read.Reading != 1 {
		t.Errorf("read: reading %v, unread %v", read.Reading, read.Unread)
	}
	blind := &Service{DB: s.DB, Matrix: s.Matrix, Embedder: readingEmbedder{s.Embedder, 0.1}, Config: s.Config}
	resp := run(t, blind, req)
	if !resp.Unread || resp.Reading != 0.1 {
		t.Errorf("unread: reading %v, unread %v", resp.Reading, resp.Unread)
	}
	n := len(lex.RankedMessages)
	if n == 0 || len(resp.RankedMessages) < n || !slices.Equal(resp.RankedMessages[:n], lex.RankedMessages) {
		t.Errorf("unread hybrid ranked %v, want lexical's %v first", resp.RankedMessages, lex.RankedMessages)
	}
	if slices.Equal(read.RankedMessages, resp.RankedMessages) {
		t.Logf("the readable query fused to the same order here: %v", read.RankedMessages)
	}
}

// Without a mode, a query the model cannot read is searched in hybrid
// mode, by its words, and a readable one in the pipeline.
func TestDefaultModeForUnreadQuery(t *testing.T) {
	s := setup(t)
	req := Request{Query: "pizza plumber landlord lease"}
	if resp := run(t, s, req); resp.Mode != Pipeline {
		t.Errorf("readable query: mode %s, want pipeline", resp.Mode)
	}
	blind := &Service{DB: s.DB, Matrix: s.Matrix, Embedder: readingEmbedder{s.Embedder, 0.1}, Config: s.Config}
	if resp := run(t, blind, req); resp.Mode != Hybrid || !resp.Unread {
		t.Errorf("unread query: mode %s, unread %v; want hybrid", resp.Mode, resp.Unread)
	}
	req.Mode = Pipeline
	if resp := run(t, blind, req); resp.Mode != Pipeline {
		t.Errorf("unread query, pipeline asked for: mode %s", resp.Mode)
	}
}

// The lexical side counts in hybrid only when one of its first hits
// holds a quarter of the query's content words. A translation shares a
// name or a number with its query and nothing else (xling-dev): hits on
// those alone are noise, and hybrid then ranks as the semantic side
// does. The same request with the rule off (LexicalSupport 0) shows the
// check can fail: there the name's and the number's hits move.
func TestHybridLeavesOutLexicalWithoutTheQuerysWords(t *testing.T) {
	h := time.Hour
	s := setupWith(t, []searchd.Message{
		m(1, general, alice, 0, "the boiler and the heater need a plumber"),
		m(2, general, bob, 3*h, "George played the game until the ending"),
		m(3, general, alice, 6*h, "George finished the story on the console at last, a long boss level"),
		m(4, general, bob, 9*h, "room 9 has the steam console"),
		m(5, general, alice, 12*h, "pizza and beer for dinner"),
		m(6, general, bob, 15*h, "heating pipes in the house"),
	})
	for _, c := range []struct {
		query string
		hits  []int64 // messages the lexical side finds
	}{
		{"George radiator valve repair 난방", []int64{2, 3}}, // 1 of 5 content words
		{"9 난방", []int64{4}},                               // exact; a number is no content word
	} {
		req := Request{Query: c.query, Mode: Hybrid, RankedMessages: true, Candidates: true}
		resp := run(t, s, req)
		if resp.Unread {
			t.Fatalf("%q: the fixture model cannot read it", c.query)
		}
		var lex, sem []int64
		for _, sc := range resp.Candidates["lexical"] {
			lex = append(lex, sc.ID)
		}
		for _, sc := range resp.Candidates["semantic"] {
			sem = append(sem, sc.ID)
		}
		slices.Sort(lex)
		if !slices.Equal(lex, c.hits) {
			t.Fatalf("%q: lexical hits %v, want %v", c.query, lex, c.hits)
		}
		if !resp.LexicalLeftOut || !slices.Equal(resp.RankedMessages, sem) {
			t.Errorf("%q: left out %v, ranked %v; want the lexical side left out and the semantic order %v",
				c.query, resp.LexicalLeftOut, resp.RankedMessages, sem)
		}
		always := &Service{DB: s.DB, Matrix: s.Matrix, Embedder: s.Embedder, Config: s.Config}
		always.Config.LexicalSupport = 0
		if resp := run(t, always, req); resp.LexicalLeftOut || slices.Equal(resp.RankedMessages, sem) {
			t.Errorf("%q with the rule off: left out %v, ranked %v, the semantic order; want the lexical side to move it",
				c.query, resp.LexicalLeftOut, resp.RankedMessages)
		}
	}
	// A hit holding a quarter of the query's words counts.
	if resp := run(t, s, Request{Query: "George radiator valve repair", Mode: Hybrid}); resp.LexicalLeftOut {
		t.Error("George radiator valve repair: lexical left out, though a hit holds one of its four content words")
	}
}
