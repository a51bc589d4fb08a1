package segment

import (
	"math"
	"slices"
)

// Feature names, in the order of the model's weights.
var (
	LinkFeatures = []string{"bias", "log minutes since", "previous line", "2 back", "3 back", "4-6 back", "7-15 back", "16+ back",
		"same author", "names candidate's author", "candidate names author", "names someone else", "candidate names someone else",
		"candidate's author's last line", "author's own last line", "shared words (log)", "shares a word",
		"candidate asks, other author", "asks", "candidate's author named author lately", "author named candidate's author lately",
		"author is in candidate's conversation", "candidate is its conversation's latest", "lines since candidate's conversation (log)",
		"previous line x authors (log)", "candidate length (log)", "own last line x back (log)", "author's own conversation", "changes the subject, other author",
		"names candidate's author, their last line", "candidate names author, author's first line since", "under a minute", "1-3 minutes", "over 10 minutes",
		"candidate's conversation size (log)", "same author, previous line"}
	NewFeatures = []string{"bias", "names someone", "asks", "author's lines in window (log)", "log minutes since previous",
		"authors in window (log)", "changes the subject", "length (log)", "author named lately"}
)

// pairFeatures describes candidate window[i] as the parent of m; ctx holds
// what is shared by all candidates.
func pairFeatures(f []float64, m *Line, window []Line, i int, ctx *context) {
	c := &window[i]
	back := len(window) - i
	clear(f)
	f[0] = 1
	f[1] = math.Log1p(float64(m.At-c.At)/6e7) / 3
	switch {
	case back == 1:
		f[2] = 1
	case back == 2:
		f[3] = 1
	case back == 3:
		f[4] = 1
	case back <= 6:
		f[5] = 1
	case back <= 15:
		f[6] = 1
	default:
		f[7] = 1
	}
	same := c.Author == m.Author
	f[8] = b2f(same)
	if !same {
		f[9] = b2f(slices.Contains(m.Mentions, c.Author))
		f[10] = b2f(slices.Contains(c.Mentions, m.Author))
	}
	f[11] = b2f(len(m.Mentions) > 0 && !slices.Contains(m.Mentions, c.Author))
	f[12] = b2f(len(c.Mentions) > 0 && !slices.Contains(c.Mentions, m.Author))
	cc := &ctx.cand[i]
	f[13] = b2f(cc.authorLast)
	own := same && cc.authorLast
	f[14] = b2f(own)
	n := shared(m.Words, c.Words)
	f[15] = math.Log1p(float64(n))
	f[16] = b2f(n > 0)
	f[17] = b2f(c.Question && !same)
	f[18] = b2f(m.Question)
	if !same {
		f[19] = b2f(cc.namedBy)
		f[20] = b2f(cc.named)
		f[21] = b2f(cc.authorIn)
	}
	latest := int(cc.segLatest)
	f[22] = b2f(latest == i)
	f[23] = math.Log1p(float64(len(window)-1-latest)) / 2
	f[24] = b2f(back == 1) * math.Log1p(float64(ctx.authors)) / 2
	f[25] = math.Log1p(float64(c.Length)) / 3
	if own {
		f[26] = math.Log(float64(back)) / 2
	}
	f[27] = b2f(ctx.ownLast >= 0 && window[ctx.ownLast].Segment == c.Segment)
	f[28] = b2f(m.Shift && !same)
	f[29] = f[9] * f[13]
	f[30] = f[10] * b2f(ctx.ownLast < i)
	dt := float64(m.At - c.At)
	f[31] = b2f(dt < 6e7)
	f[32] = b2f(dt >= 6e7 && dt < 18e7)
	f[33] = b2f(dt > 6e8)
	f[34] = math.Log1p(float64(cc.segSize)) / 3
	f[35] = b2f(same && back == 1)
}

func newFeatures(f []float64, m *Line, window []Line, ctx *context) {
	clear(f)
	f[0] = 1
	f[1] = b2f(len(m.Mentions) > 0)
	f[2] = b2f(m.Question)
	f[3] = math.Log1p(float64(ctx.ownLines)) / 2
	if len(window) > 0 {
		f[4] = math.Log1p(float64(m.At-window[len(window)-1].At)/6e7) / 3
	}
	f[5] = math.Log1p(float64(ctx.authors)) / 2
	f[6] = b2f(m.Shift)
	f[7] = math.Log1p(float64(m.Length)) / 3
	f[8] = b2f(ctx.authorNamed)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// context is what every candidate of one message shares: the window read
// once, into one entry per candidate (a window is at most a few dozen
// lines, so short slices scanned in turn beat maps).
type context struct {
	cand        []candContext
	authors     int // distinct authors of the candidates
	ownLines    int
	ownLast     int
	authorNamed bool
	authorSeen  bool // m's author wrote a candidate
}

// candContext is what the window says of one candidate.
type candContext struct {
	authorLast bool  // it is its author's latest line
	segLatest  int32 // index of its segment's latest line
	segSize    int32 // its segment's lines in the window
	authorIn   bool  // m's author wrote in its segment
	named      bool  // m's author named its author in the window
	namedBy    bool  // its author named m's author in the window
}

// people counts the authors of the candidates and the line.
func (c *context) people() int {
	if c.authorSeen {
		return c.authors
	}
	return c.authors + 1
}

func newContext(m *Line, window []Line) *context {
	ctx := &context{cand: make([]candContext, len(window)), ownLast: -1}
	var named, namedBy []int64 // people m's author named; people who named m's author
	for i := range window {
		c := &window[i]
		if c.Author == m.Author {
			ctx.ownLines++
			ctx.ownLast = i
			named = append(named, c.Mentions...)
		} else if slices.Contains(c.Mentions, m.Author) {
			namedBy = append(namedBy, c.Author)
			ctx.authorNamed = true
		}
	}
	ctx.authorSeen = ctx.ownLast >= 0
	// Newest first: the first line met of an author or a segment is its
	// latest.
	type segState struct {
		id           int64
		latest, size int32
		authorIn     bool
	}
	var authors []int64
	var segs []segState
	segOf := make([]int32, len(window)) // candidate → index in segs
	for i := len(window) - 1; i >= 0; i-- {
		c := &window[i]
		cc := &ctx.cand[i]
		if !slices.Contains(authors, c.Author) {
			authors = append(authors, c.Author)
			cc.authorLast = true
		}
		k := slices.IndexFunc(segs, func(s segState) bool { return s.id == c.Segment })
		if k < 0 {
			k = len(segs)
			segs = append(segs, segState{id: c.Segment, latest: int32(i)})
		}
		segs[k].size++
		segs[k].authorIn = segs[k].authorIn || c.Author == m.Author
		segOf[i] = int32(k)
		cc.named = slices.Contains(named, c.Author)
		cc.namedBy = slices.Contains(namedBy, c.Author)
	}
	for i := range ctx.cand {
		s := &segs[segOf[i]]
		ctx.cand[i].segLatest, ctx.cand[i].segSize, ctx.cand[i].authorIn = s.latest, s.size, s.authorIn
	}
	ctx.authors = len(authors)
	return ctx
}
