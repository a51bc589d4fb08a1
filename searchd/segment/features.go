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
	f[13] = b2f(ctx.lastOf[c.Author] == i)
	own := same && ctx.lastOf[m.Author] == i
	f[14] = b2f(own)
	n := shared(m.Words, c.Words)
	f[15] = math.Log1p(float64(n))
	f[16] = b2f(n > 0)
	f[17] = b2f(c.Question && !same)
	f[18] = b2f(m.Question)
	if !same {
		f[19] = b2f(ctx.namedBy[c.Author])
		f[20] = b2f(ctx.named[c.Author])
		f[21] = b2f(ctx.authorIn[c.Segment])
	}
	latest := ctx.segLatest[c.Segment]
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
	f[34] = math.Log1p(float64(ctx.segSize[c.Segment])) / 3
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
// once.
type context struct {
	lastOf      map[int64]int  // author → index of their latest line
	segLatest   map[int64]int  // segment → index of its latest line
	segSize     map[int64]int  // segment → its lines in the window
	authorIn    map[int64]bool // segments m's author wrote in
	named       map[int64]bool // people m's author named in the window
	namedBy     map[int64]bool // people who named m's author in the window
	authors     int
	ownLines    int
	ownLast     int
	authorNamed bool
	author      int64
}

// people counts the authors of the candidates and the line.
func (c *context) people() int {
	if _, ok := c.lastOf[c.author]; ok {
		return c.authors
	}
	return c.authors + 1
}

func newContext(m *Line, window []Line) *context {
	ctx := &context{lastOf: map[int64]int{}, segLatest: map[int64]int{}, segSize: map[int64]int{}, authorIn: map[int64]bool{},
		named: map[int64]bool{}, namedBy: map[int64]bool{}, ownLast: -1, author: m.Author}
	for i := range window {
		c := &window[i]
		ctx.lastOf[c.Author] = i
		ctx.segLatest[c.Segment] = i
		ctx.segSize[c.Segment]++
		if c.Author == m.Author {
			ctx.authorIn[c.Segment] = true
			ctx.ownLines++
			ctx.ownLast = i
			for _, u := range c.Mentions {
				ctx.named[u] = true
			}
		} else if slices.Contains(c.Mentions, m.Author) {
			ctx.namedBy[c.Author] = true
			ctx.authorNamed = true
		}
	}
	ctx.authors = len(ctx.lastOf)
	return ctx
}
