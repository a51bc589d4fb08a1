package segment

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The reply-link model: each spoken message gets one answer to "who is
// my parent?", chosen among the channel's recent spoken messages, or "none:
// it starts a conversation". Conversations are the connected links, so a
// message joins its parent's conversation. This is the blog's plan, with
// the Ubuntu IRC disentanglement corpus's human links as the teacher
// (Kummerfeld et al. 2019; see docs/segmentation.md and `searchd train
// linker`).

// Line is what the linker knows of a spoken message: who wrote it when,
// whom it names, and its words. Segment is the conversation a placed line
// joined (0 for the line being placed).
type Line struct {
	ID, At, Author int64 // At in µs
	Mentions       []int64
	Words          []uint64 // distinct content words, hashed, sorted
	Question       bool
	Length         int  // words
	Shift          bool // opens with a change of subject ("btw", "근데")
	Segment        int64
	Name           uint64 // the author's name, hashed as a word
}

// hash is 64-bit FNV-1a (hash/fnv's New64a), without its allocations.
func hash[T string | []byte](w T) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(w); i++ {
		h ^= uint64(w[i])
		h *= 1099511628211
	}
	return h
}

// named returns m with the candidates' authors whose names it uses as a
// word added to its mentions.
func named(m *Line, cands []Line) *Line {
	out := m
	for i := range cands {
		c := &cands[i]
		if c.Name == 0 || c.Author == m.Author || slices.Contains(out.Mentions, c.Author) {
			continue
		}
		if _, found := slices.BinarySearch(m.Words, c.Name); found {
			if out == m {
				cp := *m
				cp.Mentions = slices.Clone(m.Mentions)
				out = &cp
			}
			out.Mentions = append(out.Mentions, c.Author)
		}
	}
	return out
}

// NewLine describes a message for the linker: name is its author's name
// (a name used as a word in a later line counts as naming them: IRC's
// convention, and how friends address each other without a Discord
// mention).
func NewLine(id, at, author int64, name, content string, mentions []int64) Line {
	l := Line{ID: id, At: at, Author: author, Mentions: mentions}
	eachWord(name, func(w []byte) bool {
		if utf8.RuneCount(w) >= 2 {
			l.Name = hash(w)
		}
		return false // the first word only
	})
	var first, second string // for Shift
	eachWord(content, func(w []byte) bool {
		switch l.Length {
		case 0:
			first = string(w)
		case 1:
			second = string(w)
		}
		l.Length++
		if len(w) < 3 && !isHangulWord(w) || stopwords[string(w)] {
			return true
		}
		l.Words = append(l.Words, hash(w))
		return true
	})
	slices.Sort(l.Words)
	l.Words = slices.Compact(l.Words)
	t := strings.TrimSpace(content)
	l.Question = strings.HasSuffix(t, "?") || strings.HasSuffix(t, "？") || strings.Contains(t, "? ")
	if l.Length > 0 {
		l.Shift = shiftWords[first] || l.Length > 1 && shiftWords[first+" "+second] ||
			l.Length > 1 && (first == "oh" || first == "아") && shiftWords[second]
	}
	return l
}

// eachWord calls fn with each word of s, lowercased, until fn returns
// false: the runs of letters, digits and apostrophes of
// strings.ToLower(s), without allocating them (w is only valid during
// the call).
func eachWord(s string, fn func(w []byte) bool) {
	var buf [64]byte
	w := buf[:0]
	for _, r := range s {
		r = unicode.ToLower(r) // what strings.ToLower does to each rune
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' {
			w = utf8.AppendRune(w, r)
			continue
		}
		if len(w) > 0 {
			if !fn(w) {
				return
			}
			w = w[:0]
		}
	}
	if len(w) > 0 {
		fn(w)
	}
}

func isHangulWord(w []byte) bool {
	for _, r := range string(w) {
		if unicode.Is(unicode.Hangul, r) {
			return utf8.RuneCount(w) >= 2
		}
	}
	return false
}

// stopwords are English function words too common to say two lines share
// a subject.
var stopwords = setOf("the", "and", "for", "you", "your", "are", "was", "but", "not", "with", "have", "has",
	"that", "this", "what", "how", "can", "any", "all", "just", "get", "got", "its", "it's", "i'm", "don't",
	"there", "then", "than", "they", "them", "from", "will", "would", "should", "could", "when", "where",
	"which", "who", "why", "yes", "yeah", "now", "one", "out", "about", "does", "did", "had", "been",
	"also", "some", "use", "know", "like", "try", "see", "think", "want", "need", "thanks", "thank", "ok",
	"okay", "well", "too", "very", "here", "more", "into", "still", "only", "really", "lol")

// shiftWords open a line that changes the subject.
var shiftWords = setOf("btw", "by the", "anyway", "anyways", "unrelated", "offtopic", "ot", "speaking",
	"근데", "그런데", "그나저나", "아무튼", "암튼", "참", "맞다")

func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

func shared(a, b []uint64) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// LinkerVersion numbers the feature set: weights trained for another
// version do not fit.
const LinkerVersion = 1

// Linker scores a message's candidate parents.
type Linker struct {
	Version int       `json:"version"`
	Link    []float64 `json:"link"` // weights of LinkFeatures
	New     []float64 `json:"new"`  // weights of NewFeatures
	// Layer, if set, adds a small hidden layer over the link features:
	// Out · tanh(Hidden · f + Bias), for what the features say together.
	Layer
	// NewOffset is added to the score of starting a conversation when
	// placing (not in training): chosen on irc-dev, it trades splitting
	// against merging.
	NewOffset float64 `json:"new_offset"`
	// Window: a message may link to the channel's latest Window spoken
	// lines, at most Horizon seconds back.
	Window  int     `json:"window"`
	Horizon float64 `json:"horizon_seconds"`
	Note    string  `json:"note,omitempty"` // where the weights come from

	// hiddenByFeature is byFeature, made once by ParseLinker, whose
	// linkers are not changed after (training changes its own).
	hiddenByFeature []float64
}

// Choice is the linker's answer for one message: the index in the window
// of its parent, or -1 for a new conversation, with the scores it chose
// between (a softmax over them is the model's probability).
type Choice struct {
	Parent   int
	Score    float64 // the chosen option's score
	NewScore float64 // the score of starting a conversation
	BestLink float64 // the best candidate's score (-Inf without candidates)
	Prob     float64 // the chosen option's probability (Explain; 0 from Choose)
	// Dialogue: a small group's line that does not change the subject,
	// which therefore links to one of its candidates (see SmallGroup).
	Dialogue bool
}

// SmallGroup: where at most this many people wrote the candidates and the
// line, a line continues the talk unless it opens with a change of
// subject ("btw", "근데"). The training data cannot teach this: on a
// support channel a newcomer's line is usually a new question, while two
// or three friends taking turns are having one conversation (LoCoMo's
// sessions; the blog's example, split only where B says "oh btw").
const SmallGroup = 3

// Candidates returns the part of window (a channel's spoken lines before
// m, oldest first) the linker considers: the latest Window lines within
// Horizon.
func (l *Linker) Candidates(m *Line, window []Line) []Line {
	if len(window) > l.Window {
		window = window[len(window)-l.Window:]
	}
	horizon := int64(l.Horizon * 1e6)
	i := 0
	for i < len(window) && m.At-window[i].At > horizon {
		i++
	}
	return window[i:]
}

// Choose picks m's parent among the candidates (from Candidates). It
// leaves Prob 0: Explain also computes it, which costs an exact score for
// every candidate.
func (l *Linker) Choose(m *Line, cands []Line) Choice { return l.choose(m, cands, false) }

// Explain is Choose with the chosen option's probability.
func (l *Linker) Explain(m *Line, cands []Line) Choice { return l.choose(m, cands, true) }

func (l *Linker) choose(m *Line, cands []Line, explain bool) Choice {
	m = named(m, cands)
	ctx := newContext(m, cands)
	var nbuf [64]float64 // the features fit: no allocation
	nf := nbuf[:len(NewFeatures)]
	newFeatures(nf, m, cands, ctx)
	ch := Choice{Parent: -1, NewScore: dot(l.New, nf) + l.NewOffset, Score: math.Inf(-1), BestLink: math.Inf(-1)}
	ch.Dialogue = len(cands) > 0 && ctx.people() <= SmallGroup && !m.Shift
	if !ch.Dialogue {
		ch.Score = ch.NewScore
	}
	scores := l.scores(m, cands, ctx, explain)
	for i, s := range scores {
		if math.IsInf(s, -1) {
			continue // cannot be the best (see scores)
		}
		ch.BestLink = max(ch.BestLink, s)
		if s > ch.Score {
			ch.Parent, ch.Score = i, s
		}
	}
	if explain {
		z := math.Exp(ch.NewScore - ch.Score)
		for _, s := range scores {
			z += math.Exp(s - ch.Score)
		}
		ch.Prob = 1 / z
	}
	return ch
}

// scores returns each candidate's score, exact for every candidate that
// may be the best and -Inf for the others (exact for all with exact).
// The hidden layer's tanh is most of the cost: every candidate is scored
// first with tanhApprox, whose error bounds the score's, and only those
// within twice that bound of the best approximate score are scored
// exactly. Any other is surely below the best, so the choice and the best
// score are those of scoring every candidate exactly.
func (l *Linker) scores(m *Line, cands []Line, ctx *context, exact bool) []float64 {
	out := make([]float64, len(cands))
	var fbuf [64]float64
	f := fbuf[:len(LinkFeatures)]
	units := len(l.Hidden)
	if units == 0 || exact {
		for i := range cands {
			pairFeatures(f, m, cands, i, ctx)
			out[i] = l.linkScore(f, nil)
		}
		return out
	}
	byFeature := l.hiddenByFeature
	if byFeature == nil {
		byFeature = l.byFeature()
	}
	var zbuf [64]float64
	z := zbuf[:0]
	if units > len(zbuf) {
		z = make([]float64, 0, units)
	}
	z = z[:units]
	best := math.Inf(-1)
	for i := range cands {
		pairFeatures(f, m, cands, i, ctx)
		out[i] = l.approxActivate(l.preactivateBy(byFeature, f, z), z)
		best = max(best, out[i])
	}
	// The few that may be the best: their features again, scored exactly.
	spread := l.approxSpread()
	for i := range cands {
		if out[i] < best-2*spread {
			out[i] = math.Inf(-1)
			continue
		}
		pairFeatures(f, m, cands, i, ctx)
		out[i] = l.activate(l.preactivateBy(byFeature, f, z), z, nil)
	}
	return out
}

// Layer is the optional hidden layer of the link scorer.
type Layer struct {
	Hidden [][]float64 `json:"hidden,omitempty"`
	Bias   []float64   `json:"hidden_bias,omitempty"`
	Out    []float64   `json:"hidden_out,omitempty"`
}

// linkScore scores a candidate's features; act, if not nil, receives the
// hidden layer's activations.
func (l *Linker) linkScore(f []float64, act []float64) float64 {
	var buf [64]float64
	z := buf[:0]
	if len(l.Hidden) > len(buf) {
		z = make([]float64, 0, len(l.Hidden))
	}
	z = z[:len(l.Hidden)]
	return l.activate(l.preactivate(f, z), z, act)
}

// preactivate returns the linear part of the score of features f and puts
// each hidden unit's input in z.
func (l *Linker) preactivate(f, z []float64) float64 {
	s := dot(l.Link, f)
	if len(l.Hidden) == 0 {
		return s
	}
	// Most features are 0: sum over the others only (the same sums).
	var buf [64]int
	nz := buf[:0]
	for k, x := range f {
		if x != 0 {
			nz = append(nz, k)
		}
	}
	for h, w := range l.Hidden {
		sum := 0.0
		for _, k := range nz {
			sum += w[k] * f[k]
		}
		z[h] = sum + l.Bias[h]
	}
	return s
}

// approxActivate is activate with tanhApprox: within approxSpread.
func (l *Linker) approxActivate(lin float64, z []float64) float64 {
	s := lin
	for h, x := range z {
		s += l.Out[h] * tanhApprox(x)
	}
	return s
}

// approxSpread bounds how far approxActivate may be from activate.
func (l *Linker) approxSpread() float64 {
	var spread float64
	for _, o := range l.Out {
		spread += math.Abs(o) * tanhErr
	}
	return spread*1.01 + 1e-9 // and the rounding of the sums
}

// byFeature returns the hidden layer's weights feature by feature: the
// weights of feature k on each unit are [k*units, (k+1)*units).
func (l *Linker) byFeature() []float64 {
	units := len(l.Hidden)
	w := make([]float64, len(LinkFeatures)*units)
	for h, row := range l.Hidden {
		for k, x := range row {
			w[k*units+h] = x
		}
	}
	return w
}

// preactivateBy is preactivate with the weights of byFeature: the same
// sums, in the same order, without reading each unit's weights apart.
func (l *Linker) preactivateBy(byFeature, f, z []float64) float64 {
	s := dot(l.Link, f)
	clear(z)
	units := len(z)
	for k, x := range f {
		if x == 0 {
			continue
		}
		w := byFeature[k*units : (k+1)*units]
		for h := range z {
			z[h] += w[h] * x
		}
	}
	for h := range z {
		z[h] += l.Bias[h]
	}
	return s
}

// activate adds the hidden layer's output for inputs z to the linear
// part lin; act, if not nil, receives the activations.
func (l *Linker) activate(lin float64, z, act []float64) float64 {
	s := lin
	for h, x := range z {
		a := math.Tanh(x)
		if act != nil {
			act[h] = a
		}
		s += l.Out[h] * a
	}
	return s
}

// tanhApprox is math.Tanh within tanhErr, by linear interpolation in a
// table: a fraction of the cost.
func tanhApprox(x float64) float64 {
	if !(x > -tanhMax) { // and NaN
		return -1
	}
	if x >= tanhMax {
		return 1
	}
	u := (x + tanhMax) * tanhSteps
	i := min(int(u), len(tanhTable)-2)
	return tanhTable[i] + (u-float64(i))*(tanhTable[i+1]-tanhTable[i])
}

// tanhErr bounds |tanhApprox(x) - math.Tanh(x)|: linear interpolation
// errs by at most step²/8 · max|tanh”| = 2.4e-5 (max|tanh”| is 0.77),
// and beyond ±tanhMax, ±1 by 1 - tanh(8) = 2.3e-7. TestTanhApprox checks.
const tanhErr = 1e-4

const (
	tanhMax   = 8
	tanhSteps = 64 // table points per unit
)

var tanhTable = func() (t [2*tanhMax*tanhSteps + 1]float64) {
	for i := range t {
		t[i] = math.Tanh(float64(i-tanhMax*tanhSteps) / tanhSteps)
	}
	return t
}()

// hiddenGradient adds d times the gradient of the hidden layer's output
// for features f to g.
func (l *Linker) hiddenGradient(f []float64, d float64, g *Layer) {
	for h, w := range l.Hidden {
		a := math.Tanh(dot(w, f) + l.Bias[h])
		g.Out[h] += d * a
		back := d * l.Out[h] * (1 - a*a)
		g.Bias[h] += back
		for k, x := range f {
			g.Hidden[h][k] += back * x
		}
	}
}

func dot(w, f []float64) float64 {
	var s float64
	for i, x := range f {
		s += w[i] * x
	}
	return s
}

// Gradient adds to gl, gn and gh (the gradients of the Link, New and
// hidden layer's weights)
// those of the loss -log P(gold) for one message, where P is the softmax
// over "starts a conversation" and each candidate, and gold lists the
// right options (candidate indexes, -1 for a new conversation).
func Gradient(l *Linker, m *Line, cands []Line, gold []int, gl, gn []float64, gh *Layer) float64 {
	m = named(m, cands)
	ctx := newContext(m, cands)
	feats := make([][]float64, len(cands))
	nf := make([]float64, len(NewFeatures))
	newFeatures(nf, m, cands, ctx)
	scores := make([]float64, len(cands)+1)
	scores[0] = dot(l.New, nf)
	top := scores[0]
	for i := range cands {
		feats[i] = make([]float64, len(LinkFeatures))
		pairFeatures(feats[i], m, cands, i, ctx)
		scores[i+1] = l.linkScore(feats[i], nil)
		top = max(top, scores[i+1])
	}
	var z float64
	for i, s := range scores {
		scores[i] = math.Exp(s - top)
		z += scores[i]
	}
	var zg float64
	for _, g := range gold {
		zg += scores[g+1]
	}
	for i := range scores {
		p := scores[i] / z
		q := 0.0
		if slices.Contains(gold, i-1) {
			q = scores[i] / zg
		}
		d := p - q
		if i == 0 {
			for k, x := range nf {
				gn[k] += d * x
			}
			continue
		}
		for k, x := range feats[i-1] {
			gl[k] += d * x
		}
		if len(l.Hidden) > 0 {
			l.hiddenGradient(feats[i-1], d, gh)
		}
	}
	return -math.Log(zg / z)
}
