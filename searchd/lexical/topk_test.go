package lexical

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"dsearch/searchd/export"
)

// exhaustive is the reference Search prunes: every posting of every term
// scored, then ranked.
func (x *Index) exhaustive(q Query) []Hit {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.live == 0 || q.Limit <= 0 {
		return nil
	}
	avg := float64(x.tokens) / float64(x.live)
	score, hit, live := map[uint32]float64{}, map[uint32]bool{}, map[Term][]posting{}
	all := slices.Clone(q.Terms)
	for _, alt := range q.Required {
		all = append(all, alt...)
	}
	for i, t := range all {
		if _, ok := live[t]; ok {
			continue
		}
		l, _ := x.match(t)
		if text := FoldTerm(t); t.CJK && utf8.RuneCountInString(text) > 2 {
			l = x.phraseByText(text)
		}
		var ps []posting
		for _, p := range l.ps {
			if !x.dead.has(p.doc) {
				ps = append(ps, p)
			}
		}
		live[t] = ps
		idf := math.Log((float64(x.live) - float64(len(ps)) + 0.5) / (float64(len(ps)) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		for _, p := range ps {
			if i < len(q.Terms) {
				hit[p.doc] = true
			}
			score[p.doc] += idf * float64(p.tf) * (k1 + 1) / (float64(p.tf) + k1*(1-b+b*float64(x.docs[p.doc].length)/avg))
		}
	}
	var out []Hit
	for n, s := range score {
		d := &x.docs[n]
		m := x.meta[n]
		author := x.authors.ids[m.author]
		if len(q.Terms) > 0 && !hit[n] || !q.Filter.Admits(x.channels.ids[m.channel], author, m.created) {
			continue
		}
		if len(q.Required) > 0 && !slices.ContainsFunc(q.Required, func(alt []Term) bool {
			return !slices.ContainsFunc(alt, func(t Term) bool {
				_, ok := slices.BinarySearchFunc(live[t], n, func(p posting, n uint32) int { return int(p.doc) - int(n) })
				return !ok
			})
		}) {
			continue
		}
		out = append(out, Hit{ID: d.id, AuthorID: author, Score: s})
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return out[:min(len(out), q.Limit)]
}

// phraseByText lists the messages holding a CJK phrase by reading every
// message's text, as a reference for match's bigram look-ups.
func (x *Index) phraseByText(text string) postingList {
	var l postingList
	for n, d := range x.docs {
		if c := overlapping(x.texts.text(x.docs, uint32(n)), []byte(text), math.MaxInt); c > 0 {
			l.add(posting{doc: uint32(n), tf: uint16(min(c, math.MaxUint16)), len: uint16(min(d.length, longDoc))})
		}
	}
	return l
}

// same fails unless Search and the exhaustive scorer agree on q: the same
// messages in the same order with the same scores, to the bit.
func same(t *testing.T, x *Index, q Query, what string) bool {
	t.Helper()
	got, want := x.Search(q), x.exhaustive(q)
	if len(got) != len(want) {
		t.Errorf("%s (limit %d): %d hits, exhaustive %d", what, q.Limit, len(got), len(want))
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s (limit %d): hit %d is %+v, exhaustive %+v", what, q.Limit, i, got[i], want[i])
			return false
		}
	}
	return true
}

// evalDir holds the evaluation exports (../shared/eval beside the clone).
var evalDir = filepath.Join("..", "..", "..", "shared", "eval")

// Every query of every evaluation set, over that set's messages, with the
// limits and filters searches use, and keywords taken from the query:
// pruning changes nothing.
func TestSearchMatchesExhaustive(t *testing.T) {
	sets, _ := filepath.Glob(filepath.Join(evalDir, "*", "queries.jsonl"))
	if len(sets) == 0 {
		t.Skip("no evaluation data (../shared/eval beside the clone)")
	}
	for _, set := range sets {
		dir := filepath.Dir(set)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			x, channels, authors, span := indexExports(t, dir)
			queries := readQueries(t, set)
			if len(queries) == 0 || x.Len() == 0 {
				t.Fatalf("%d queries over %d messages", len(queries), x.Len())
			}
			r := rand.New(rand.NewPCG(1, uint64(len(queries))))
			failed := 0
			for _, text := range queries {
				terms := Terms(text)
				for _, q := range variants(r, terms, channels, authors, span) {
					if !same(t, x, q, fmt.Sprintf("%q", text)) {
						failed++
					}
				}
				if failed > 5 {
					t.Fatal("giving up")
				}
			}
		})
	}
}

// variants are the ways a search asks: the limits of a page, a window and
// one hit, a keyword required, channel, author and time filters.
func variants(r *rand.Rand, terms []Term, channels, authors []int64, span [2]int64) []Query {
	var out []Query
	for _, limit := range []int{1, 10, 100} {
		out = append(out, Query{Terms: terms, Limit: limit})
	}
	if len(terms) > 1 {
		kw := terms[r.IntN(len(terms))]
		other := terms[r.IntN(len(terms))]
		out = append(out,
			Query{Terms: terms, Required: [][]Term{{kw}}, Limit: 10},
			Query{Terms: terms, Required: [][]Term{{kw}, {other}}, Limit: 100},
			Query{Required: [][]Term{{kw, other}}, Limit: 10},
			Query{Terms: terms, Required: [][]Term{{{Text: "zzzunknown"}}, {kw}}, Limit: 10})
	}
	ch, au := channels[r.IntN(len(channels))], authors[r.IntN(len(authors))]
	mid := span[0] + r.Int64N(max(1, span[1]-span[0]))
	out = append(out,
		Query{Terms: terms, Limit: 100, Filter: Filter{Channels: []int64{ch}}},
		Query{Terms: terms, Limit: 10, Filter: Filter{Authors: []int64{au}}},
		Query{Terms: terms, Limit: 10, Filter: Filter{Since: mid}},
		Query{Terms: terms, Limit: 100, Filter: Filter{Channels: []int64{ch, -1}, Until: mid}},
		Query{Terms: terms, Limit: 10, Filter: Filter{Channels: []int64{-1}}})
	return out
}

func indexExports(t *testing.T, dir string) (x *Index, channels, authors []int64, span [2]int64) {
	x = NewIndex()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	span = [2]int64{math.MaxInt64, math.MinInt64}
	for _, f := range files {
		_, msgs, err := export.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			x.Put(Doc{ID: m.ID, ChannelID: m.ChannelID, AuthorID: m.Author.ID, CreatedAt: m.CreatedAt, Content: m.Content})
			if !slices.Contains(channels, m.ChannelID) {
				channels = append(channels, m.ChannelID)
			}
			if len(authors) < 50 && !slices.Contains(authors, m.Author.ID) {
				authors = append(authors, m.Author.ID)
			}
			span = [2]int64{min(span[0], m.CreatedAt), max(span[1], m.CreatedAt)}
		}
	}
	x.Trim() // as a load ends
	return x, channels, authors, span
}

func readQueries(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q struct{ Query string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, q.Query)
	}
	return out
}

// Random queries over a random corpus of Zipf-distributed words and
// Korean syllables, with edits and deletions leaving dead postings, and
// documents long enough to need the stored length.
func TestSearchMatchesExhaustiveRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	words := make([]string, 400)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	syllables := []rune("집에이사전세보일러수리치킨맥주")
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	text := func() string {
		var sb strings.Builder
		n := 1 + r.IntN(20)
		if r.IntN(500) == 0 {
			n = 70000 // longer than a posting can say
		}
		for range n {
			if r.IntN(5) == 0 {
				for range 1 + r.IntN(3) {
					sb.WriteRune(syllables[r.IntN(len(syllables))])
				}
			} else {
				sb.WriteString(words[zipf.Uint64()])
			}
			sb.WriteByte(' ')
		}
		return sb.String()
	}
	x := NewIndex()
	const n = 6000
	for i := range n {
		x.Put(Doc{ID: int64(r.IntN(3 * n)), ChannelID: int64(r.IntN(4)), AuthorID: int64(r.IntN(9)), CreatedAt: int64(i), Content: text()})
		if r.IntN(10) == 0 {
			x.Delete(int64(r.IntN(3 * n)))
		}
		if i == n/2 {
			x.Trim() // lists copied to their length, then appended to
		}
	}
	if x.live == len(x.docs) {
		t.Fatal("no dead postings to skip")
	}
	query := func() []Term {
		var ts []Term
		for range 1 + r.IntN(6) {
			if r.IntN(3) == 0 {
				at := r.IntN(len(syllables) - 3)
				ts = append(ts, Term{Text: string(syllables[at : at+1+r.IntN(3)]), CJK: true})
			} else {
				ts = append(ts, Term{Text: words[zipf.Uint64()]})
			}
		}
		return ts
	}
	for i := range 150 {
		terms := query()
		for _, q := range variants(r, terms, []int64{0, 1, 2, 3}, []int64{0, 4, 8}, [2]int64{0, n}) {
			if !same(t, x, q, fmt.Sprintf("query %d %v", i, terms)) {
				t.FailNow()
			}
		}
	}
}

// Filters skip blocks of postings by their messages' times and channels,
// in stored lists and in the lists made for one search (a phrase of
// bigrams, a lone syllable), here many blocks long, over messages stored
// channel after channel, each in time, as an import stores them.
func TestFilteredSkipsMatchExhaustive(t *testing.T) {
	x := NewIndex()
	texts := []string{"보일러 수리 기사님", "집에 보일러가 고장", "우리 집이 춥다", "보일러 보일러 집 수리", "game night 집"}
	const n = 4000
	for i := range n {
		x.Put(Doc{ID: int64(i + 1), ChannelID: int64(i / 500), AuthorID: int64(i % 7), CreatedAt: int64(i), Content: texts[i%len(texts)]})
	}
	for _, q := range []string{"보일러", "집", "보일러 수리", "집 game", "기사님 집"} {
		for _, f := range []Filter{
			{Since: 1234, Until: 2345}, {Channels: []int64{3}}, {Channels: []int64{1, 6}, Since: 600},
			{Channels: []int64{0}, Until: 10}, {Authors: []int64{2}, Since: 3000}, {Channels: []int64{99}},
		} {
			for _, limit := range []int{10, 100} {
				same(t, x, Query{Terms: Terms(q), Filter: f, Limit: limit}, fmt.Sprintf("%q %+v", q, f))
			}
		}
	}
}

// A query of more terms than a window marks holders for (64): the later
// terms' weights are told apart by their values, and cleared after each
// doc.
func TestSearchManyTermsMatchesExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	x := NewIndex()
	for i := range 5000 {
		var sb strings.Builder
		for range 3 + r.IntN(12) {
			fmt.Fprintf(&sb, "w%d ", r.IntN(100))
		}
		x.Put(Doc{ID: int64(i + 1), ChannelID: int64(i % 3), AuthorID: int64(i % 5), CreatedAt: int64(i), Content: sb.String()})
	}
	var terms []Term
	for i := range 100 {
		terms = append(terms, Term{Text: fmt.Sprintf("w%d", (i*37)%100)})
	}
	for _, limit := range []int{1, 10, 100, 1000} {
		// A search of few terms first leaves its window's weights (a
		// window is reused), which one of many must not read.
		x.Search(Query{Terms: terms[:3], Limit: 10})
		same(t, x, Query{Terms: terms, Limit: limit}, "100 terms")
		x.Search(Query{Terms: terms[:3], Limit: 10})
		same(t, x, Query{Terms: terms[:70], Limit: limit, Filter: Filter{Channels: []int64{1}}}, "70 terms, one channel")
	}
}
