package search

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"dsearch/searchd/index"
	"dsearch/searchd/lexical"
	"dsearch/searchd/sqlite"
)

// Knowing when nothing matches. A cosine says nothing by itself: e5's are
// compressed (docs/retrieval.md, "Confidence": answers p50 0.854, the best
// result with no answer p50 0.817), and every query finds something.
// What does tell is relative to the query: whether a result stands out
// from the query's similarity to every conversation searched (its
// standout, a z-score over the scan's spread), and whether the query's
// content words are in the result's messages beyond what as much text
// would hold by chance (its support), and how
// close it comes to a copy of the query (its closeness: a translation or
// a paraphrase shares no words); and whether the first results together
// hold the words (an answer told over several conversations). All were
// chosen, and their thresholds set, by `searchd eval abstain` over every
// evaluation set and both models (docs/retrieval.md, "Abstention").

// Confidence is how clearly a result matches its query.
type Confidence struct {
	// High: it clearly matches; otherwise it is only the closest thing
	// found.
	High bool
	// Standout is how far the result's similarity stands above what the
	// best of the conversations searched would reach by chance: its
	// z-score over the query's similarity to every one of them, less
	// √(2 ln n), where the largest of n unrelated scores falls (so a
	// large server's best guess does not stand out by its number alone).
	// 0 when there is none to compare with (lexical mode, a query the
	// model cannot read, fewer than minSpread conversations): then
	// Support alone decides.
	Standout float64
	// Support is the share of the query's content words (names and
	// English stop words left out) found in the result's messages beyond
	// those as much text would hold by chance: (found − expected) /
	// words, at most 1, below 0 when fewer are found than chance
	// would; 1 for a query without content words. A conversation of
	// eighty messages holds "time" and "think" whatever it is about.
	Support float64
	// Closeness is how far the result's similarity goes from the
	// query's mean over the conversations searched towards its
	// similarity to itself embedded as a passage, a copy's: 1 as close
	// as a copy, 0 no closer than the average conversation (0 when not
	// judged, as Standout).
	Closeness float64
	// Together is the support of the response's first results
	// (togetherRanks) taken together, as one text: the share of the
	// query's content words they hold between them beyond what as much
	// text holds by chance (0 when not judged: a response that standout
	// and support already make confident, and a result after them). A
	// result among them that holds one of the words is confident when it
	// reaches Config.Together.
	Together float64
	// Evidence is what they were judged from, for `searchd eval
	// abstain`'s dump (not in the API).
	Evidence Evidence
}

// Evidence are the raw measures behind a Confidence.
type Evidence struct {
	// Z is the result's similarity as a z-score over the N conversations
	// it is compared with (0 when not judged).
	Z float64
	N int
	// MessageZ is the result's best message as a z-score over the M
	// messages rescored (0 when not judged).
	MessageZ float64
	M        int
	// RareSupport is the share of the query's content words found, each
	// weighted by its rarity (inverse document frequency over the
	// audience's messages); the share itself without a keyword index, 0
	// unless Service.Measure.
	RareSupport float64
	// Chance is how many of the content words as much text would hold
	// by chance (chance; 0 without a keyword index), Length the text's
	// length in messages of the average length.
	Chance, Length float64
	// Lead is how far the result's similarity stands above the best of
	// the other conversations compared (the runner-up, for the most
	// similar one; below 0 for every other), in the query's spreads
	// (0 when not judged).
	Lead float64
	// Cosine is the result's similarity (its segment's), MessageCosine
	// its best message's (length-weighted, as rescoring has it; 0 when
	// none has a vector): absolute, compared across models only by
	// `searchd eval abstain`'s dump.
	Cosine, MessageCosine float64
	// Words are the query's content words, Found those of them in the
	// result's messages (Support = Found/Words).
	Words, Found int
	// Mean and Std are the query's similarity spread over the
	// conversations compared; Self is its similarity to itself embedded
	// as a passage, the ceiling of a copy (Closeness is from them).
	Mean, Std, Self float64
	// NearSupport is Support over the result's messages nearer the
	// query than the average message rescored (NearJudged: the
	// result's messages have similarities; Config.SupportNear).
	NearSupport float64
	NearJudged  bool
	// OtherScript: most of the result's words are in another script
	// than the query's (a translation, at best: its closeness is held to
	// Config.TranslationCloseness).
	OtherScript bool
	// Terms are the query's content words one by one (only under
	// Service.Measure), so that `scripts/abstain-replay.py` can weigh
	// the words found by other rules: the first three results together
	// (--together), other stop words.
	Terms []TermEvidence
}

// TermEvidence is one content word's part in Support.
type TermEvidence struct {
	Text string
	// Held: how many of the result's messages hold it; Chance: how
	// likely as much text holds it by chance (summed, Evidence.Chance);
	// P: how likely one message of the average length does (its share
	// of the other messages the audience may read).
	Held      int
	Chance, P float64
}

// A result is confident when it stands out by Config.Standout, comes
// Config.Closeness of the way to a copy of the query
// (Config.TranslationCloseness when written in another script), or holds
// Config.Support of the query's content words (lexical mode, or no
// standout: Support alone).
const (
	// minSpread is the fewest conversations a spread is told from.
	minSpread = 8
	// confidentRanks: the response is confident when one of its first
	// results is.
	confidentRanks = 3
	// togetherRanks: or when its first page's worth of results together
	// hold the query's words (Config.Together).
	togetherRanks = DefaultLimit
)

// confidence judges a result from its segment's similarity and the
// words of its messages.
func (q *query) confidence(r Result, texts []string) Confidence {
	h := q.holdingOf(r, texts)
	held, n := h.held, h.length
	found, words := counted(held, nil)
	length := q.messagesLike(n, len(texts))
	expected := q.rarity.chance(held, length, len(texts))
	c := Confidence{Support: beyondChance(found, words, expected)}
	if words == 0 && len(q.named) == 0 {
		// Nothing to find ("the", "??"): support says nothing, where
		// 1 made every result of such a query confident.
		c.Support = 0
	}
	c.Evidence.Words, c.Evidence.Found, c.Evidence.Self = int(words), int(found), q.self
	c.Evidence.Chance, c.Evidence.Length = expected, length
	if h.nearJudged {
		// The same over its messages near the query, which decides
		// below, where the similarity says something.
		found, words := counted(h.nearHeld, nil)
		c.Evidence.NearJudged = true
		c.Evidence.NearSupport = beyondChance(found, words, q.rarity.chance(h.nearHeld, q.messagesLike(h.nearLength, h.nNear), h.nNear))
	}
	if q.svc.Measure {
		c.Evidence.RareSupport = share(supported(q.contentTerms(), q.rarity.weights, texts))
		c.Evidence.Terms = q.rarity.terms(q.contentTerms(), held, length, len(texts))
	}
	if ws := q.within[r.SegmentID]; ws != nil && ws.hasSim && q.msgSpread.N > 1 {
		c.Evidence.M, c.Evidence.MessageCosine = q.msgSpread.N, ws.bestSim
		if q.msgSpread.Std > 0 {
			c.Evidence.MessageZ = (ws.bestSim - q.msgSpread.Mean) / q.msgSpread.Std
		}
	}
	cfg := q.svc.Config
	if q.Mode == Lexical || q.vec == nil || q.unread || q.spread.N < minSpread || q.spread.Std == 0 {
		// No similarity to judge by (none, one of a model that cannot
		// read the query, or nothing to stand out from): the words alone.
		c.High = c.Support >= cfg.Support
		return c
	}
	sim := q.similarity(r)
	z := (sim - q.spread.Mean) / q.spread.Std
	c.Evidence.Z, c.Evidence.N = z, q.spread.N
	c.Evidence.Mean, c.Evidence.Std = q.spread.Mean, q.spread.Std
	c.Evidence.Lead, c.Evidence.Cosine = q.lead(r, sim), sim
	c.Standout = z - math.Sqrt(2*math.Log(float64(q.spread.N)))
	if q.self > q.spread.Mean {
		c.Closeness = (sim - q.spread.Mean) / (q.self - q.spread.Mean)
	}
	// Read only where it can decide: a conversation is eighty messages.
	if q.svc.Measure || cfg.TranslationCloseness > 0 && c.Closeness >= cfg.TranslationCloseness && c.Closeness < cfg.Closeness {
		c.Evidence.OtherScript = inOtherScript(q.text, texts)
	}
	bar := cfg.Closeness
	if c.Evidence.OtherScript && cfg.TranslationCloseness > 0 && bar > 0 {
		// At best a translation, which comes less close than a copy.
		bar = cfg.TranslationCloseness
	}
	// Where the meaning is: a conversation of forty messages holds
	// "know" or "children" in one about something else.
	supported := c.Support >= cfg.Support && (!cfg.SupportNear || !h.nearJudged || c.Evidence.NearSupport > 0)
	c.High = c.Standout >= cfg.Standout || supported || bar > 0 && c.Closeness >= bar
	return c
}

// similarity is the query's cosine with the result's segment (its best
// window).
func (q *query) similarity(r Result) float64 {
	if c, ok := r.Components["semantic"]; ok && c.Rank > 0 {
		return c.Score
	}
	best := math.Inf(-1)
	for _, w := range q.svc.Matrix.WindowScores(q.vec, r.SegmentID) {
		best = max(best, float64(w.Score))
	}
	if math.IsInf(best, -1) {
		return q.spread.Mean // no vector: no evidence either way
	}
	return best
}

// lead is how far sim, r's similarity, stands above the most similar of
// the other conversations compared, in units of the query's spread.
func (q *query) lead(r Result, sim float64) float64 {
	if len(q.leaders) < 2 {
		return 0
	}
	other := q.leaders[0]
	if other.ID == r.SegmentID {
		other = q.leaders[1]
	}
	return (sim - float64(other.Score)) / q.spread.Std
}

// contentTerms are the query's words that say what it is about
// (topicTerms), not the names taken out of it.
func (q *query) contentTerms() []lexical.Term {
	if q.content == nil {
		q.content = topicTerms(q.text + " " + strings.Join(q.Keywords, " "))
	}
	return q.content
}

// dates are numbers and Korean dates (2025년 3월에, 14일): when, not what,
// a question asks about; the time filter's business, seldom in the
// messages' words.
var dates = regexp.MustCompile(`[0-9]+\s*(년|월|일|시|분|주|개월)?`)

// topicTerms are text's words that say what it is about: Latin words of
// three letters or more that are not stop words (Stopword) or names of
// months and weekdays (the time filter's), CJK runs of
// two characters or more that do not ask (koreanQuestionWord); numbers
// and dates left out.
func topicTerms(text string) []lexical.Term {
	out := []lexical.Term{}
	for _, t := range lexical.Terms(dates.ReplaceAllString(text, " ")) {
		if n := utf8.RuneCountInString(t.Text); n >= 3 && !t.CJK && !Stopword(t.Text) && !dateNames[t.Text] || t.CJK && n >= 2 && !koreanQuestionWord(t.Text) {
			out = append(out, t)
		}
	}
	return out
}

// beyondChance is the share of words found beyond those expected by
// chance: (found − expected) / words; 1 when there are none to find.
func beyondChance(found, words, expected float64) float64 {
	if words == 0 {
		return 1
	}
	return (found - expected) / words
}

// support is the share of terms found in texts (supported).
func support(terms []lexical.Term, weights []float64, texts []string) float64 {
	return share(supported(terms, weights, texts))
}

// share is found/all; 1 when there is nothing to find (a query without
// content words).
func share(found, all float64) float64 {
	if all == 0 {
		return 1
	}
	return found / all
}

// supported counts the terms found in texts, each by its weight (nil: 1
// each), and all of them (holding).
func supported(terms []lexical.Term, weights []float64, texts []string) (found, all float64) {
	held, _ := holding(terms, texts)
	return counted(held, weights)
}

// counted sums the weights (nil: 1 each) of the terms some text holds,
// and of all of them.
func counted(held []int, weights []float64) (found, all float64) {
	for i, n := range held {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		all += w
		if n > 0 {
			found += w
		}
	}
	return found, all
}

// holding counts, for each term, the texts holding it: a Latin word as
// a word sharing its first four letters (moving, moved: move), all of a
// shorter one; a CJK run by its first two characters, the stem a Korean
// particle or ending follows (이사를, 이사). And the texts' length as the
// keyword index counts it (lexical.TermLength).
func holding(terms []lexical.Term, texts []string) (held []int, length int) {
	h := holdingWhere(terms, texts, nil)
	return h.held, h.length
}

// holdingWhere is holding, and the same over the texts near marks
// (nil: none), all in one pass.
func holdingWhere(terms []lexical.Term, texts []string, near []bool) held {
	h := held{held: make([]int, len(terms)), nearHeld: make([]int, len(terms)), nTexts: len(texts)}
	words := map[string]bool{}
	var cjk strings.Builder
	for ti, t := range texts {
		clear(words)
		cjk.Reset()
		isNear := near != nil && near[ti]
		if isNear {
			h.nNear++
		}
		// Every word of a message, however long: Terms would keep a
		// query's first 64 (a KorQuAD paragraph's first sentences).
		lexical.EachTerm(t, func(w lexical.Term) {
			h.length += lexical.TermLength(w)
			if isNear {
				h.nearLength += lexical.TermLength(w)
			}
			if len(terms) == 0 {
				return
			}
			if w.CJK {
				cjk.WriteString(w.Text + " ")
			} else {
				words[prefix(w.Text, 4)] = true
			}
		})
		joined := cjk.String()
		for i, t := range terms {
			if t.CJK && strings.Contains(joined, prefix(t.Text, 2)) || !t.CJK && words[prefix(t.Text, 4)] {
				h.held[i]++
				if isNear {
					h.nearHeld[i]++
				}
			}
		}
	}
	return h
}

// embed embeds the query.
func (q *query) embed(ctx context.Context) error {
	v, err := q.svc.Embedder.EmbedQuery(ctx, q.text)
	if err != nil {
		return fmt.Errorf("embed query: %w", err)
	}
	q.vec = v
	return nil
}

// measureSelf sets q.self, the query's similarity to itself embedded as
// a passage: the ceiling of a copy, which closeness is measured against.
// Apart from the query, not in one batch: a dynamically quantized
// model's vectors depend on their batch, and the query's ranking must not
// depend on the judging.
func (q *query) measureSelf(ctx context.Context) error {
	if q.self != 0 || q.unread || q.vec == nil || q.Mode == Lexical {
		return nil
	}
	vs, err := q.svc.Embedder.EmbedPassages(ctx, []string{q.text})
	if err != nil {
		return fmt.Errorf("embed query as a passage: %w", err)
	}
	if len(vs) == 1 && len(vs[0]) == len(q.vec) {
		q.self = float64(index.Dot(q.vec, vs[0]))
	}
	return nil
}

// rarity is how common each of the query's content words is among the
// messages of the channels the audience may read (query.audience; the
// term as support matches it): never of the others.
type rarity struct {
	// df: how many messages hold it, of n; weights: its inverse
	// document frequency (BM25's), for the dump's RareSupport.
	df, weights []float64
	n           float64
	// avgLen is a message's mean length (lexical.TermLength).
	avgLen float64
	done   bool
}

// weigh sets q.rarity; none without the keyword index (or while it
// loads): then chance is 0 and support the share of words found.
func (q *query) weigh(ctx context.Context) error {
	if q.rarity.done || q.svc.Keywords == nil {
		return nil
	}
	q.rarity.done = true
	idx, err := q.svc.Keywords.Current(ctx)
	if err != nil || idx == nil {
		return err
	}
	audience, err := q.audience(ctx)
	if err != nil {
		return err
	}
	terms := slices.Clone(q.contentTerms())
	for i, t := range terms {
		if t.CJK {
			terms[i].Text = prefix(t.Text, 2)
		}
	}
	df, n, avgLen := idx.Rarity(terms, audience)
	r := rarity{df: make([]float64, len(terms)), weights: make([]float64, len(terms)), n: float64(n), avgLen: avgLen, done: true}
	for i := range terms {
		r.weights[i] = math.Log(1 + (float64(n-df[i])+0.5)/(float64(df[i])+0.5))
		r.df[i] = float64(df[i])
	}
	q.rarity = r
	return nil
}

// chance is how many of the words a text as long as length messages of
// the average length holds by chance, each word in a message by its
// share of the other messages: the text's k messages, which hold them
// held times, are left out, or a small server's topic would be common
// for being talked about in the conversation judged.
func (r rarity) chance(held []int, length float64, k int) float64 {
	sum := 0.0
	for i := range r.df {
		_, c := r.wordChance(i, held[i], length, k)
		sum += c
	}
	return sum
}

// wordChance is the i-th word's share p of the messages other than the
// text's k (which hold it held times), and the chance c that a text as
// long as length messages of the average length holds it.
func (r rarity) wordChance(i, held int, length float64, k int) (p, c float64) {
	others := r.n - float64(k)
	if others <= 0 {
		return 0, 0
	}
	p = max(0, r.df[i]-float64(held)) / others
	return p, 1 - math.Pow(1-p, length)
}

// terms are each content word's evidence, for the dump.
func (r rarity) terms(words []lexical.Term, held []int, length float64, k int) []TermEvidence {
	out := make([]TermEvidence, len(words))
	for i, w := range words {
		out[i] = TermEvidence{Text: w.Text, Held: held[i]}
		if i < len(r.df) {
			out[i].P, out[i].Chance = r.wordChance(i, held[i], length, k)
		}
	}
	return out
}

// messagesLike is how many messages of the average length k texts of
// length n are as long as (k, without the average): a KorQuAD paragraph
// is many chat lines' worth of words.
func (q *query) messagesLike(n, k int) float64 {
	if q.rarity.avgLen == 0 {
		return float64(k)
	}
	return float64(n) / q.rarity.avgLen
}

func prefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// judge sets the confidence of the page's results and says whether any
// of the first ranked is confident. Closeness costs a second embedding
// of the query (as much CPU as the first: a third of eight clients'
// throughput), so it is measured only where it can decide: when
// standout and support leave the response unconfident (and always under
// Measure, whose dump holds it). Whether a response is confident is the
// same either way; a confident response's results carry no closeness.
//
// The first results together (togetherRanks) are judged next, before
// closeness, and only where they can decide: a question whose answer is
// told over several conversations, as LoCoMo's multi-hop and
// open-domain ones are, finds a few of its words in each of them and
// all of them in none (docs/retrieval.md, "Abstention").
func (q *query) judge(ctx context.Context, ranked, page []Result) (bool, error) {
	top := ranked[:min(confidentRanks, len(ranked))]
	shown := ranked[:min(togetherRanks, len(ranked))]
	texts, err := q.texts(ctx, slices.Concat(top, page, shown))
	if err != nil {
		return false, err
	}
	if err := q.weigh(ctx); err != nil {
		return false, err
	}
	if q.svc.Measure {
		if err := q.measureSelf(ctx); err != nil {
			return false, err
		}
	}
	cfg := q.svc.Config
	confident := q.rate(top, page, texts)
	together, judged := 0.0, false
	if q.svc.Measure || !confident && cfg.Together > 0 {
		together, judged = q.together(shown, texts[len(top)+len(page):]), true
	}
	byTogether := judged && cfg.Together > 0 && together >= cfg.Together
	if !confident && !byTogether && q.self == 0 && cfg.Closeness > 0 {
		if err := q.measureSelf(ctx); err != nil {
			return false, err
		}
		if q.self != 0 {
			confident = q.rate(top, page, texts)
		}
	}
	if judged {
		markTogether(page, shown, together, byTogether)
	}
	return confident || byTogether, nil
}

// resultKey names a result: a segment, or in lexical mode a message.
type resultKey struct{ segment, message int64 }

// held is how many of a result's texts hold each content word, their
// length as the keyword index counts it, and how many texts there are;
// and the same of its texts near the query (nearJudged: told).
type held struct {
	held              []int
	length, nTexts    int
	nearHeld          []int
	nearLength, nNear int
	nearJudged        bool
}

// holdingOf counts r's texts' words once per query: its own support and
// the first results' together read the same messages.
func (q *query) holdingOf(r Result, texts []string) held {
	k := resultKey{r.SegmentID, r.MessageID}
	if h, ok := q.holdings[k]; ok {
		return h
	}
	near, judged := q.nearQuery(r, len(texts))
	h := holdingWhere(q.contentTerms(), texts, near)
	h.nearJudged = judged
	if q.holdings == nil {
		q.holdings = map[resultKey]held{}
	}
	q.holdings[k] = h
	return h
}

// nearQuery says which of r's n texts (its messages, as texts has them)
// are nearer the query than the average message rescored (q.msgSpread),
// by their similarity as rescoring judged it (withinSegment.judged);
// judged: r's messages have similarities to tell it by.
func (q *query) nearQuery(r Result, n int) (near []bool, judged bool) {
	ws := q.within[r.SegmentID]
	if q.Mode == Lexical || r.SegmentID == 0 || ws == nil || len(ws.messages) != n || len(ws.judged) == 0 || q.msgSpread.N < 2 {
		return nil, false
	}
	near = make([]bool, n)
	for i, m := range ws.messages {
		if sim, ok := ws.judged[m.ID]; ok && sim >= q.msgSpread.Mean {
			near[i] = true
		}
	}
	return near, true
}

// together is the support of results (texts: their messages) taken as
// one text: (found − expected) / words over all their messages, the
// chance of each word by its share of the other messages and their
// length (0 for a query without content words).
func (q *query) together(results []Result, texts [][]string) float64 {
	sum := make([]int, len(q.contentTerms()))
	length, n := 0, 0
	for i, r := range results {
		h := q.holdingOf(r, texts[i])
		for j, c := range h.held {
			sum[j] += c
		}
		length, n = length+h.length, n+h.nTexts
	}
	found, words := counted(sum, nil)
	if words == 0 {
		return 0
	}
	return beyondChance(found, words, q.rarity.chance(sum, q.messagesLike(length, n), n))
}

// markTogether gives the page's results among shown their together
// support, and makes those holding one of the query's words confident
// when it decided (byTogether).
func markTogether(page, shown []Result, together float64, byTogether bool) {
	among := map[resultKey]bool{}
	for _, r := range shown {
		among[resultKey{r.SegmentID, r.MessageID}] = true
	}
	for i := range page {
		if c := &page[i].Confidence; among[resultKey{page[i].SegmentID, page[i].MessageID}] {
			c.Together = together
			c.High = c.High || byTogether && c.Evidence.Found > 0
		}
	}
}

// rate sets the page's confidences and says whether one of top is
// confident; texts are top's and then page's.
func (q *query) rate(top, page []Result, texts [][]string) bool {
	type key struct{ segment, message int64 }
	judged := map[key]Confidence{} // the first page begins with top
	confident := false
	for i, r := range top {
		c := q.confidence(r, texts[i])
		judged[key{r.SegmentID, r.MessageID}] = c
		confident = confident || c.High
	}
	for i, r := range page {
		c, ok := judged[key{r.SegmentID, r.MessageID}]
		if !ok {
			c = q.confidence(r, texts[len(top)+i])
		}
		page[i].Confidence = c
	}
	return confident
}

// texts are the messages of each result: a segment's first
// RescoreLimit, as rescoring sees them; in lexical mode, the message.
func (q *query) texts(ctx context.Context, results []Result) ([][]string, error) {
	out := make([][]string, len(results))
	var segs, msgs []int64
	for _, r := range results {
		if q.Mode == Lexical || r.SegmentID == 0 {
			msgs = append(msgs, r.MessageID)
		} else {
			segs = append(segs, r.SegmentID)
		}
	}
	if err := q.rankWithin(ctx, segs); err != nil {
		return nil, err
	}
	byID := map[int64]string{}
	if len(msgs) > 0 {
		ms, err := q.messages(ctx, msgs)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			byID[m.ID] = m.Content
		}
	}
	for i, r := range results {
		if q.Mode == Lexical || r.SegmentID == 0 {
			out[i] = []string{byID[r.MessageID]}
		} else if ws := q.within[r.SegmentID]; ws != nil {
			for _, m := range ws.messages {
				out[i] = append(out[i], m.Content)
			}
		}
	}
	return out, nil
}

// koreanQuestionWords begin the Korean words that ask rather than say
// what a question is about (언제였지, 누가, 뭐야, 어디서), or that only
// carry it (했지, 한다고, 말했어, 얘기한), as the English stop words hold
// when, who, what, where, did, say, talk.
var koreanQuestionWords = []string{"언제", "누가", "누구", "무엇", "뭐", "어디", "어떻게", "어떤", "어느", "왜", "몇", "얼마",
	"했", "한다", "하는", "하고", "하다", "말했", "말한", "얘기", "이야기"}

func koreanQuestionWord(w string) bool {
	return slices.ContainsFunc(koreanQuestionWords, func(p string) bool { return strings.HasPrefix(w, p) })
}

// reference is what a result's similarity is compared with, when it is
// not what the scan saw: the conversations of the channels searched,
// without the keywords, authors and times that narrow the search (a
// question naming a person or a date searches a few conversations; its
// answer stands out from all of those channels'). Channels only: the
// caller's channels are the ones it may read.
func (q *query) reference(ctx context.Context) (*segmentSet, bool, error) {
	f := q.Filter
	if len(f.Authors) == 0 && f.Since == 0 && f.Until == 0 {
		return q.searched, q.narrowed, nil
	}
	ref, err := q.svc.segmentsMatching(ctx, q.version, sqlite.Filter{Channels: f.Channels})
	return ref, true, err
}

// spreadOver is the query's similarity spread over the segments allow
// admits (nil: all), and the two most similar of them, for when the
// scan's own were over fewer (a keyword filter).
func (q *query) spreadOver(allow *segmentSet) ([]index.Scored, index.Spread) {
	return q.topKSpread(allow, 2)
}
