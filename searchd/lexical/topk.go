package lexical

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Search ranks the messages that match q, best first, ties by ID.
//
// It finds the top Limit by BM25 without scoring most postings (MaxScore
// with block bounds): each term's weight in any message is bounded by its
// idf and the most frequent, shortest posting, for the whole list and for
// each block of it. Once Limit messages are held, a message whose bound is
// under the worst of them cannot enter: the terms whose bounds together
// stay under it (and whose lists are longer than the rest) only look up
// the messages the others bring, and a window of docs whose blocks' bounds
// are under it is skipped. The walked lists are scored a window of docs at
// a time, term at a time, into an array (no merging of lists posting by
// posting, whose branches cost more than the scoring). Scores are summed
// in the same order as scoring every posting would, so the ranking and
// the scores are the exhaustive ones exactly (TestSearchMatchesExhaustive).
func (x *Index) Search(q Query) []Hit {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.live == 0 || q.Limit <= 0 {
		return nil
	}
	s := x.newSearch(q)
	s.run()
	out := []Hit(s.top)
	slices.SortFunc(out, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return out
}

// slack covers rounding: a bound summed in another order than the score
// must still not fall under it.
const slack = 1 + 1e-9

type search struct {
	x       *Index
	q       Query
	avg     float64
	cursors []*cursor // distinct terms, in the order their scores are summed
	byBound []*cursor // ascending bound
	// required lists, per alternative, the indexes of its terms.
	required [][]int
	admits   *admits // nil: any message
	top      hitHeap

	drivers  []*cursor // walked for candidates
	others   []*cursor // looked up, descending bound
	othersUB float64
	next     uint32 // the first doc of the windows not ranked yet
	scratch  *scratch
}

// window is how many docs a walk scores at a time (term at a time), then
// ranks (doc at a time): a window's weights stay in a core's cache.
const window = 2048

// scratch is a walk's window: each driver's weight in each of the
// window's docs, their sum (in slot order: only bounds read it), which
// drivers hold the doc, and which docs some driver holds. A rank leaves
// sums, holders and touched zero; the weights are read only where a
// doc's holders say so, and left as they are. With more than 64 drivers
// (a holder is a bit) the weights are zero but for the window's, and a
// weight (never 0) says whether a driver holds the doc: the array is
// cleared first if dirty, and each doc's row after it is ranked.
type scratch struct {
	weights []float64 // window × driver slot
	dirty   bool      // weights holds some not cleared
	sums    [window]float64
	holders [window]uint64
	touched [window / 64]uint64
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func (x *Index) newSearch(q Query) *search {
	sc := x.scope(q.Scope)
	if sc.live == 0 {
		sc.avg = 1 // nothing there: no message of Filter's is ranked
	}
	s := &search{x: x, q: q, avg: sc.avg, admits: x.admits(q.Filter)}
	index := map[Term]int{}
	add := func(t Term, inTerms bool) int {
		if i, ok := index[t]; ok {
			return i
		}
		l, live := x.match(t)
		df := sc.count(l, live)
		idf := math.Log((float64(sc.live) - float64(df) + 0.5) / (float64(df) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		c := newCursor(l)
		c.idf, c.inTerms = idf, inTerms
		for bi := range l.blocks {
			c.bound = max(c.bound, s.blockBound(c, bi))
		}
		index[t] = len(s.cursors)
		s.cursors = append(s.cursors, c)
		return index[t]
	}
	for _, t := range q.Terms {
		add(t, true)
	}
	for _, alt := range q.Required {
		idx := make([]int, len(alt))
		for i, t := range alt {
			idx[i] = add(t, false)
		}
		s.required = append(s.required, idx)
	}
	s.byBound = slices.Clone(s.cursors)
	slices.SortStableFunc(s.byBound, func(a, b *cursor) int { return cmp.Compare(a.bound, b.bound) })
	return s
}

// weight is a term's BM25 weight in a message, as FTS5's bm25() adds it.
func weight(idf, tf, dl, avg float64) float64 {
	return idf * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avg))
}

func (s *search) blockBound(c *cursor, bi int) float64 {
	bl := c.blocks[bi]
	return weight(c.idf, float64(bl.maxTF), float64(bl.minLen), s.avg)
}

func (s *search) full() bool { return len(s.top) >= s.q.Limit }

// threshold is the score a message must reach to enter: the worst held,
// once Limit are held.
func (s *search) threshold() float64 {
	if !s.full() {
		return math.Inf(-1)
	}
	return s.top[0].Score
}

// partition picks the lists walked for candidates: the terms whose bounds
// together reach the threshold (MaxScore's essential lists), or, when
// keywords are required and their lists are shorter, the rarest term of
// each alternative (every match holds one). The rest are looked up.
func (s *search) partition() {
	th := s.threshold()
	sum, cut := 0.0, 0
	for cut < len(s.byBound) && (sum+s.byBound[cut].bound)*slack < th {
		sum += s.byBound[cut].bound
		cut++
	}
	drivers := s.byBound[cut:]
	if len(s.required) > 0 {
		var rarest []*cursor
		for _, alt := range s.required {
			r := s.cursors[alt[0]]
			for _, i := range alt[1:] {
				if c := s.cursors[i]; len(c.ps)-c.pos < len(r.ps)-r.pos {
					r = c
				}
			}
			if !slices.Contains(rarest, r) {
				rarest = append(rarest, r)
			}
		}
		if remaining(rarest) < remaining(drivers) {
			drivers = rarest
		}
	}
	s.drivers = append(s.drivers[:0], drivers...)
	if len(s.required) == 0 {
		// Looking a list up costs a seek for each candidate the drivers
		// bring; walking it costs its postings. A list no longer than the
		// drivers together is walked as well: a message only it holds
		// stays under the threshold all the same (its bound is under it).
		walked := remaining(s.drivers)
		for _, c := range s.byBound[:cut] {
			if n := len(c.ps) - c.pos; n <= walked {
				s.drivers = append(s.drivers, c)
				walked += n
			}
		}
	}
	s.others, s.othersUB = s.others[:0], 0
	for i := len(s.byBound) - 1; i >= 0; i-- {
		if c := s.byBound[i]; !slices.Contains(s.drivers, c) {
			s.others = append(s.others, c)
			s.othersUB += c.bound
		}
	}
}

func remaining(cs []*cursor) int {
	n := 0
	for _, c := range cs {
		n += len(c.ps) - c.pos
	}
	return n
}

// run walks the docs a window at a time. The lists are partitioned at
// each window's start: the drivers' postings in it are scored into the
// window, then the docs they hold are ranked in order, looking up the
// others. A window none of whose messages can reach the threshold (by the
// bounds of the drivers' blocks in it) is skipped.
func (s *search) run() {
	s.scratch = scratchPool.Get().(*scratch)
	defer scratchPool.Put(s.scratch)
	for {
		s.partition()
		lo := uint32(exhausted)
		for _, c := range s.drivers {
			c.seek(s.next) // a list looked up until now
			lo = min(lo, c.cur)
		}
		if lo == exhausted {
			return
		}
		lo -= lo % window
		hi := lo + window
		s.next = hi
		if s.full() && s.windowBound(lo, hi)*slack < s.threshold() {
			continue
		}
		w := s.scratch
		switch n := len(s.drivers); {
		case len(w.weights) < n*window:
			w.weights, w.dirty = make([]float64, n*window), n <= 64
		case n <= 64:
			w.dirty = true
		case w.dirty:
			clear(w.weights)
			w.dirty = false
		}
		for slot, c := range s.drivers {
			s.score(c, slot, lo, hi)
		}
		s.rank(lo)
	}
}

// windowBound bounds a message's score in [lo, hi): the drivers' blocks
// there, and the others' lists.
func (s *search) windowBound(lo, hi uint32) float64 {
	bound := s.othersUB
	for _, c := range s.drivers {
		if c.cur >= hi {
			continue
		}
		most := 0.0
		for bi := c.pos / blockSize; bi < len(c.blocks); bi++ {
			most = max(most, s.blockBound(c, bi))
			if c.blocks[bi].last >= hi {
				break
			}
		}
		bound += most
	}
	return bound
}

// score writes c's weights in the docs of [lo, hi) into the window at its
// slot, adds them to the docs' sums and marks the docs, skipping the
// blocks the filter turns away.
func (s *search) score(c *cursor, slot int, lo, hi uint32) {
	w, n := s.scratch, len(s.drivers)
	holder := uint64(1) << (slot % 64)
	for c.cur < hi {
		bi := c.pos / blockSize
		end := min((bi+1)*blockSize, len(c.ps))
		if s.admits != nil && !s.admits.span(&c.spans[bi]) {
			c.moveTo(end)
			continue
		}
		pos := c.pos
		for ; pos < end; pos++ {
			p := c.ps[pos]
			if p.doc >= hi {
				break
			}
			i := p.doc - lo
			weight := s.weight(c, p)
			w.weights[int(i)*n+slot] = weight
			w.sums[i] += weight
			w.holders[i] |= holder
			w.touched[i/64] |= 1 << (i % 64)
		}
		c.moveTo(pos)
	}
}

// rank considers the window's touched docs in order, clearing the window.
func (s *search) rank(lo uint32) {
	w, n := s.scratch, len(s.drivers)
	th := s.threshold()
	for wi := range w.touched {
		for w.touched[wi] != 0 {
			i := wi*64 + bits.TrailingZeros64(w.touched[wi])
			w.touched[wi] &= w.touched[wi] - 1
			sum, holders := w.sums[i], w.holders[i]
			w.sums[i], w.holders[i] = 0, 0
			weights := w.weights[i*n : (i+1)*n]
			if (sum+s.othersUB)*slack >= th {
				for slot, c := range s.drivers {
					c.w = weights[slot]
					c.has = holders&(1<<slot) != 0
					if n > 64 {
						c.has = c.w > 0
					}
				}
				s.consider(lo+uint32(i), sum, th)
				th = s.threshold()
				for _, c := range s.cursors {
					c.has = false
				}
			}
			if n > 64 {
				clear(weights)
			}
		}
	}
}

// consider scores a candidate the drivers gave sum and keeps it if it is
// among the best.
func (s *search) consider(doc uint32, sum, th float64) {
	if (sum+s.othersUB)*slack < th {
		return
	}
	x := s.x
	if x.dead.has(doc) {
		return
	}
	if s.admits != nil && !s.admits.ok(x.meta[doc]) || s.q.Among != nil && !s.q.Among[x.docs[doc].id] {
		return
	}
	rest := s.othersUB
	for _, c := range s.others {
		c.seek(doc)
		if c.cur == doc {
			c.has, c.w = true, s.weight(c, c.ps[c.pos])
			sum += c.w
		}
		rest -= c.bound
		if (sum+rest)*slack < th {
			return
		}
	}
	if !s.matches() {
		return
	}
	score := 0.0
	for _, c := range s.cursors {
		if c.has {
			score += c.w
		}
	}
	if score < th {
		return // (and no look-up of the message for its ID)
	}
	h := Hit{ID: x.docs[doc].id, AuthorID: x.authors.ids[x.meta[doc].author], Score: score}
	switch {
	case !s.full():
		s.top.push(h)
	case better(h, s.top[0]):
		s.top.replaceWorst(h)
	}
}

// matches reports whether the candidate holds a query term (when there
// are any) and every term of a required alternative (when there are any).
func (s *search) matches() bool {
	if len(s.q.Terms) > 0 && !slices.ContainsFunc(s.cursors, func(c *cursor) bool { return c.has && c.inTerms }) {
		return false
	}
	if len(s.required) == 0 {
		return true
	}
	return slices.ContainsFunc(s.required, func(alt []int) bool {
		return !slices.ContainsFunc(alt, func(i int) bool { return !s.cursors[i].has })
	})
}

func (s *search) weight(c *cursor, p posting) float64 {
	dl := float64(p.len)
	if p.len == longDoc {
		dl = float64(s.x.docs[p.doc].length)
	}
	return weight(c.idf, float64(p.tf), dl, s.avg)
}

// hitHeap keeps the best hits, worst on top.
type hitHeap []Hit

func (h *hitHeap) push(x Hit) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !better(s[p], s[i]) {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h hitHeap) replaceWorst(x Hit) {
	h[0] = x
	for i := 0; ; {
		l, worst := 2*i+1, i
		if l < len(h) && better(h[worst], h[l]) {
			worst = l
		}
		if r := l + 1; r < len(h) && better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

// Postings is how many postings the terms of q hold: what scoring every
// one would read.
func (x *Index) Postings(q Query) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := x.newSearch(q)
	n := 0
	for _, c := range s.cursors {
		n += len(c.ps)
	}
	return n
}
