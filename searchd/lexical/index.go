package lexical

import (
	"container/heap"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Index is an in-memory inverted index over messages that ranks by the
// same BM25 as FTS5's bm25() (k1 = 1.2, b = 0.75, a row's length counted
// over both columns). FTS5 must score every match before it can rank, a
// few microseconds each in pure-Go SQLite; here a common word's tens of
// thousands of postings are summed in a millisecond. FTS5 stays the
// store of record and the fallback: this is a cache that follows it.
type Index struct {
	mu       sync.RWMutex
	docs     []doc
	byID     map[int64]uint32
	postings map[string][]posting
	// prefixes lists, per CJK character, the bigram tokens it begins, for
	// one-syllable terms (집 → 집에, 집이, 집).
	prefixes map[rune][]string
	live     int
	tokens   int64 // over live docs
}

type doc struct {
	id, channel, author, created int64
	length                       uint32
	dead                         bool
	cjk                          string // lower-cased CJK runs, for phrases of 3+ characters
}

type posting struct {
	doc uint32
	tf  uint16
}

// Doc is a message as the index keeps it.
type Doc struct {
	ID, ChannelID, AuthorID, CreatedAt int64
	Content                            string
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{byID: map[int64]uint32{}, postings: map[string][]posting{}, prefixes: map[rune][]string{}}
}

// Len is the number of messages indexed.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

var countsPool = sync.Pool{New: func() any { return map[string]int{} }}

// Put adds a message or replaces its earlier version.
func (x *Index) Put(d Doc) {
	counts := countsPool.Get().(map[string]int)
	defer func() { clear(counts); countsPool.Put(counts) }()
	var length uint32
	var cjk strings.Builder
	Tokens(d.Content, func(tok string, isCJK bool) {
		length++
		if isCJK {
			if cjk.Len() > 0 {
				cjk.WriteByte(' ')
			}
			cjk.WriteString(tok)
			return // searched through its bigrams
		}
		counts[tok]++
	})
	for _, bg := range strings.Fields(Bigrams(d.Content)) {
		length++
		counts[bg]++
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteLocked(d.ID)
	n := uint32(len(x.docs))
	x.docs = append(x.docs, doc{id: d.ID, channel: d.ChannelID, author: d.AuthorID, created: d.CreatedAt,
		length: length, cjk: cjk.String()})
	x.byID[d.ID] = n
	x.live++
	x.tokens += int64(length)
	for tok, c := range counts {
		p, known := x.postings[tok]
		if !known {
			if r, _ := utf8.DecodeRuneInString(tok); isCJK(r) {
				x.prefixes[r] = append(x.prefixes[r], tok)
			}
		}
		x.postings[tok] = append(p, posting{doc: n, tf: uint16(min(c, math.MaxUint16))})
	}
}

// Trim gives back the room postings grew into while loading.
func (x *Index) Trim() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for tok, ps := range x.postings {
		x.postings[tok] = slices.Clip(ps)
	}
	x.docs = slices.Clip(x.docs)
}

// Delete removes a message; its postings go at the next compaction.
func (x *Index) Delete(id int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteLocked(id)
}

func (x *Index) deleteLocked(id int64) {
	n, ok := x.byID[id]
	if !ok {
		return
	}
	d := &x.docs[n]
	d.dead, d.cjk = true, ""
	delete(x.byID, id)
	x.live--
	x.tokens -= int64(d.length)
	if dead := len(x.docs) - x.live; dead > 1024 && dead > x.live/4 {
		x.compactLocked()
	}
}

// compactLocked drops dead documents and their postings, renumbering the
// rest in order (postings stay sorted).
func (x *Index) compactLocked() {
	renum := make([]uint32, len(x.docs))
	docs := make([]doc, 0, x.live)
	for i, d := range x.docs {
		if !d.dead {
			renum[i] = uint32(len(docs))
			x.byID[d.id] = uint32(len(docs))
			docs = append(docs, d)
		}
	}
	for tok, ps := range x.postings {
		out := ps[:0]
		for _, p := range ps {
			if !x.docs[p.doc].dead {
				out = append(out, posting{doc: renum[p.doc], tf: p.tf})
			}
		}
		if len(out) == 0 {
			delete(x.postings, tok)
			continue
		}
		x.postings[tok] = slices.Clip(out)
	}
	for r, toks := range x.prefixes {
		x.prefixes[r] = slices.DeleteFunc(toks, func(t string) bool { _, ok := x.postings[t]; return !ok })
	}
	x.docs = docs
}

// Query is a keyword search: messages holding any of Terms, ranked by
// BM25; when Required is not empty, only those holding every term of at
// least one of its alternatives (keywords and their synonyms), whose
// terms also count in the rank. Allow, when set, admits a message by
// channel, author and time.
type Query struct {
	Terms    []Term
	Required [][]Term
	Allow    func(channel, author, created int64) bool
	Limit    int
}

// Hit is a ranked message.
type Hit struct {
	ID, AuthorID int64
	Score        float64
}

// Supports reports whether the index can answer q; a keyword phrase of
// several Latin words needs word positions, which only FTS5 keeps.
func Supports(q Query) bool {
	for _, alt := range q.Required {
		for _, t := range alt {
			if !t.CJK && strings.ContainsAny(t.Text, " \t") {
				return false
			}
		}
	}
	return true
}

// BM25 constants, FTS5's.
const (
	k1 = 1.2
	b  = 0.75
)

// Search ranks the messages that match q, best first, ties by ID.
func (x *Index) Search(q Query) []Hit {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.live == 0 || q.Limit <= 0 {
		return nil
	}
	// Each distinct term's matches, once.
	matches := map[Term][]posting{}
	all := slices.Clone(q.Terms)
	for _, alt := range q.Required {
		all = append(all, alt...)
	}
	for _, t := range all {
		if _, ok := matches[t]; !ok {
			matches[t] = x.match(t)
		}
	}
	avg := float64(x.tokens) / float64(x.live)
	sc := x.scratch()
	defer scratchPool.Put(sc)
	scored := map[Term]bool{}
	for i, t := range all {
		if scored[t] {
			continue
		}
		scored[t] = true
		ps := matches[t]
		if i < len(q.Terms) { // a query term, not only a keyword
			for _, p := range ps {
				sc.hit[p.doc] = true
			}
		}
		idf := math.Log((float64(x.live) - float64(len(ps)) + 0.5) / (float64(len(ps)) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		for _, p := range ps {
			tf := float64(p.tf)
			dl := float64(x.docs[p.doc].length)
			if sc.score[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			sc.score[p.doc] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avg))
		}
	}
	if len(q.Required) > 0 {
		// A message passes when it holds every term of an alternative.
		for _, alt := range q.Required {
			for _, t := range alt {
				for _, p := range matches[t] {
					sc.count[p.doc]++
				}
			}
			for _, t := range alt {
				for _, p := range matches[t] {
					if int(sc.count[p.doc]) == len(alt) {
						sc.required[p.doc] = true
					}
					sc.count[p.doc] = 0
				}
			}
		}
	}
	top := &hitHeap{}
	for _, n := range sc.touched {
		d := &x.docs[n]
		s := sc.score[n]
		if len(q.Terms) > 0 && !sc.hit[n] || len(q.Required) > 0 && !sc.required[n] || q.Allow != nil && !q.Allow(d.channel, d.author, d.created) {
			continue
		}
		h := Hit{ID: d.id, AuthorID: d.author, Score: s}
		if top.Len() < q.Limit {
			heap.Push(top, h)
		} else if better(h, (*top)[0]) {
			(*top)[0] = h
			heap.Fix(top, 0)
		}
	}
	for _, n := range sc.touched {
		sc.score[n], sc.required[n], sc.hit[n] = 0, false, false
	}
	sc.touched = sc.touched[:0]
	out := []Hit(*top)
	slices.SortFunc(out, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return out
}

// scratch is a query's per-message working space, reused: zeroing 650,000
// entries per query would cost more than the query.
type scratch struct {
	score    []float64
	count    []uint8
	required []bool
	hit      []bool // holds a query term
	touched  []uint32
}

var scratchPool sync.Pool

// scratch returns clean working space for the current number of docs.
func (x *Index) scratch() *scratch {
	sc, _ := scratchPool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	if n := len(x.docs); len(sc.score) < n {
		n += n / 8
		sc.score, sc.count, sc.required, sc.hit = make([]float64, n), make([]uint8, n), make([]bool, n), make([]bool, n)
	}
	return sc
}

// match lists the live messages holding t, with how often.
func (x *Index) match(t Term) []posting {
	text := FoldTerm(t)
	n := utf8.RuneCountInString(text)
	var out []posting
	keep := func(ps []posting) {
		for _, p := range ps {
			if !x.docs[p.doc].dead {
				out = append(out, p)
			}
		}
	}
	switch {
	case !t.CJK || n == 2:
		keep(x.postings[text])
	case n == 1:
		// A lone character, or the first of a pair: 집 in 집에.
		r, _ := utf8.DecodeRuneInString(text)
		tf := map[uint32]uint16{}
		for _, tok := range x.prefixes[r] {
			for _, p := range x.postings[tok] {
				if !x.docs[p.doc].dead {
					tf[p.doc] += p.tf
				}
			}
		}
		for doc, c := range tf {
			out = append(out, posting{doc: doc, tf: c})
		}
	default:
		// A phrase of bigrams: the messages holding its rarest bigram that
		// hold the whole run.
		runes := []rune(text)
		rarest := ""
		for i := 0; i+1 < len(runes); i++ {
			bg := string(runes[i : i+2])
			if rarest == "" || len(x.postings[bg]) < len(x.postings[rarest]) {
				rarest = bg
			}
		}
		for _, p := range x.postings[rarest] {
			d := &x.docs[p.doc]
			if c := overlapping(d.cjk, text); !d.dead && c > 0 {
				out = append(out, posting{doc: p.doc, tf: uint16(min(c, math.MaxUint16))})
			}
		}
	}
	return out
}

// overlapping counts occurrences of sub in s, overlaps included (하하 is
// twice in 하하하, as its bigrams are).
func overlapping(s, sub string) int {
	n := 0
	for {
		i := strings.Index(s, sub)
		if i < 0 {
			return n
		}
		n++
		_, size := utf8.DecodeRuneInString(s[i:])
		s = s[i+size:]
	}
}

func better(a, b Hit) bool { return a.Score > b.Score || a.Score == b.Score && a.ID < b.ID }

// hitHeap keeps the best hits, worst on top.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
