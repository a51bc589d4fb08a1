package lexical

import (
	"cmp"
	"math"
	"slices"
)

// Search ranks the messages that match q, best first, ties by ID.
//
// It finds the top Limit by BM25 without scoring most postings (MaxScore
// with block bounds): each term's weight in any message is bounded by its
// idf and the most frequent, shortest posting, for the whole list and for
// each block of it. Once Limit messages are held, a message whose bound is
// under the worst of them cannot enter: the terms whose bounds together
// stay under it only look up the messages the others bring, and a block
// whose bound is under it is skipped. Scores are summed in the same order
// as scoring every posting would, so the ranking and the scores are the
// exhaustive ones exactly (TestSearchMatchesExhaustive).
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

// cursor walks one distinct query term's postings.
type cursor struct {
	postingList
	pos     int
	idf     float64
	bound   float64 // on the term's weight in any message
	inTerms bool    // a query term, not only a keyword

	blockAt    int     // the block whose bound is cached, or -1
	blockBound float64 // its bound

	has bool    // holds the current candidate
	w   float64 // weight in it
}

func (c *cursor) done() bool  { return c.pos >= len(c.ps) }
func (c *cursor) doc() uint32 { return c.ps[c.pos].doc }

// seek moves to the first posting at or after doc.
func (c *cursor) seek(doc uint32) {
	if c.done() || c.doc() >= doc {
		return
	}
	bi := c.pos / blockSize
	if c.blocks[bi].last < doc {
		rest := c.blocks[bi+1:]
		bi += 1 + searchBlocks(rest, doc)
		if bi >= len(c.blocks) {
			c.pos = len(c.ps)
			return
		}
		c.pos = bi * blockSize
	}
	end := min(len(c.ps), (bi+1)*blockSize)
	for c.pos < end && c.ps[c.pos].doc < doc {
		c.pos++
	}
}

// searchBlocks is the first block whose last doc is at or after doc.
func searchBlocks(bs []block, doc uint32) int {
	lo, hi := 0, len(bs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bs[m].last < doc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

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
	next     uint32 // the least doc not considered yet
}

func (x *Index) newSearch(q Query) *search {
	s := &search{x: x, q: q, avg: float64(x.tokens) / float64(x.live), admits: x.admits(q.Filter)}
	index := map[Term]int{}
	add := func(t Term, inTerms bool) int {
		if i, ok := index[t]; ok {
			return i
		}
		l, df := x.match(t)
		idf := math.Log((float64(x.live) - float64(df) + 0.5) / (float64(df) + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		c := &cursor{postingList: l, idf: idf, inTerms: inTerms, blockAt: -1}
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

// cachedBlockBound is the bound of the block the cursor is in.
func (s *search) cachedBlockBound(c *cursor) float64 {
	if bi := c.pos / blockSize; bi != c.blockAt {
		c.blockAt, c.blockBound = bi, s.blockBound(c, bi)
	}
	return c.blockBound
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
	s.drivers, s.others, s.othersUB = drivers, s.others[:0], 0
	for i := len(s.byBound) - 1; i >= 0; i-- {
		if c := s.byBound[i]; !slices.Contains(drivers, c) {
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

func (s *search) run() {
	s.partition()
	for {
		th := s.threshold()
		// The next candidate: the least doc any driver is at.
		doc, any := uint32(math.MaxUint32), false
		for _, c := range s.drivers {
			c.seek(s.next) // a list that was looked up until now
			if s.admits != nil {
				s.skipUnadmitted(c)
			}
			if !c.done() && c.doc() <= doc {
				doc, any = c.doc(), true
			}
		}
		if !any {
			return
		}
		// Skip the drivers' blocks when even their bounds cannot reach the
		// threshold: no message before the nearest block end or the next
		// driver's doc can.
		if s.full() {
			bound, next := s.othersUB, uint32(math.MaxUint32)
			for _, c := range s.drivers {
				switch {
				case c.done():
				case c.doc() == doc:
					bound += s.cachedBlockBound(c)
					next = min(next, c.blocks[c.pos/blockSize].last+1)
				default:
					next = min(next, c.doc())
				}
			}
			if bound*slack < th {
				s.next = next
				continue
			}
		}
		s.next = doc + 1
		sum := 0.0
		for _, c := range s.drivers {
			if !c.done() && c.doc() == doc {
				p := c.ps[c.pos]
				c.pos++
				c.has, c.w = true, s.weight(c, p)
				sum += c.w
			}
		}
		if s.consider(doc, sum, th) {
			s.partition()
		}
		for _, c := range s.cursors {
			c.has = false
		}
	}
}

// skipUnadmitted moves a driver past the blocks none of whose messages
// the filter admits. A message skipped may still come from another
// driver, without this one's weight: the filter turns it away before it
// is scored.
func (s *search) skipUnadmitted(c *cursor) {
	for !c.done() {
		bi := c.pos / blockSize
		if s.admits.span(&c.spans[bi]) {
			return
		}
		c.pos = min((bi+1)*blockSize, len(c.ps))
	}
}

// consider scores a candidate the drivers gave sum and keeps it if it is
// among the best; it reports whether the threshold moved.
func (s *search) consider(doc uint32, sum, th float64) bool {
	x := s.x
	if x.dead.has(doc) || (sum+s.othersUB)*slack < th {
		return false
	}
	if s.admits != nil && !s.admits.ok(x.meta[doc]) {
		return false
	}
	rest := s.othersUB
	for _, c := range s.others {
		c.seek(doc)
		if !c.done() && c.doc() == doc {
			c.has, c.w = true, s.weight(c, c.ps[c.pos])
			sum += c.w
		}
		rest -= c.bound
		if (sum+rest)*slack < th {
			return false
		}
	}
	if !s.matches() {
		return false
	}
	score := 0.0
	for _, c := range s.cursors {
		if c.has {
			score += c.w
		}
	}
	if score < th {
		return false // (and no look-up of the message for its ID)
	}
	h := Hit{ID: x.docs[doc].id, AuthorID: x.authors.ids[x.meta[doc].author], Score: score}
	switch {
	case !s.full():
		s.top.push(h)
		return s.full()
	case better(h, s.top[0]):
		s.top.replaceWorst(h)
		return true
	}
	return false
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
