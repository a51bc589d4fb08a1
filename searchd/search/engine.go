package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"dsearch/searchd/index"
	"dsearch/searchd/lexical"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// InputError is a request the caller must fix.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// ErrNoModel means a mode needs embeddings and no model is loaded.
var ErrNoModel = errors.New("no embedding model is loaded: only lexical search is available (start searchd with --model)")

// Search runs one search and returns the page the cursor points at.
func (s *Service) Search(ctx context.Context, req Request) (*Response, error) {
	if req.Mode == "" && s.Embedder == nil {
		req.Mode = Lexical // the default mode without a model; asking for another is an error
	}
	if err := req.Validate(); err != nil {
		return nil, &InputError{err}
	}
	version, err := s.DB.IndexVersion(ctx)
	if err != nil {
		return nil, err
	}
	fp := fingerprint(&req)
	var cur Cursor
	if req.Cursor != "" {
		if err := DecodeCursor(req.Cursor, &cur, version, fp); err != nil {
			return nil, &InputError{err}
		}
	}
	offset := cur.Offset
	resp := &Response{Mode: req.Mode}
	q := &query{Request: req, svc: s, version: version, text: req.Query, terms: lexical.Terms(req.Query + " " + strings.Join(req.Keywords, " "))}
	if s.Config.AuthorBoost > 0 {
		if err := q.resolveNames(ctx); err != nil {
			return nil, err
		}
	}
	var ranked []Result
	switch req.Mode {
	case Lexical:
		ranked, err = q.lexical(ctx)
	default:
		if s.Embedder == nil || s.Matrix == nil {
			return nil, ErrNoModel
		}
		start := time.Now()
		if q.vec, err = s.Embedder.EmbedQuery(ctx, q.text); err != nil {
			return nil, fmt.Errorf("embed query: %w", err)
		}
		resp.QueryEmbedTime = time.Since(start)
		switch req.Mode {
		case Semantic:
			ranked, err = q.semantic(ctx, s.Config.Window)
		case Hybrid:
			ranked, err = q.hybrid(ctx)
		case Pipeline:
			ranked, err = q.pipeline(ctx, resp)
		}
	}
	if err != nil {
		return nil, err
	}
	if req.Mode != Lexical && s.Config.MinSimilarity > 0 && len(ranked) == 0 {
		resp.NoConfidentResults = true
	}
	if offset > 0 && offset >= len(ranked) {
		return nil, &InputError{fmt.Errorf("cursor offset %d is past the last of %d results", offset, len(ranked))}
	}
	resp.Total = len(ranked)
	end := min(offset+req.Limit, len(ranked))
	if end < len(ranked) {
		resp.NextCursor = EncodeCursor(Cursor{Version: version, Fingerprint: fp, Offset: end})
	}
	if req.RankedMessages {
		if resp.RankedMessages, err = q.rankMessages(ctx, ranked); err != nil {
			return nil, err
		}
	}
	resp.Results = ranked[offset:end]
	err = q.decorate(ctx, resp.Results)
	resp.EmbeddedMessages = q.embedded
	return resp, err
}

// query is one search in progress.
type query struct {
	Request
	svc *Service
	// version is the index version the search started at.
	version int64
	vec     []float32
	terms   []lexical.Term
	// text is the query without the names of people it mentions; named
	// are those people.
	text  string
	named map[int64]bool
	// lex and sem are hybrid's retriever results, kept for rankMessages.
	lex, sem []Result
	// within caches per-segment message rankings.
	within map[int64]*withinSegment
	// embedded counts message texts embedded on the fly.
	embedded int
}

// keywordAlternatives are "contains one of the keywords (or their
// synonyms) verbatim": each alternative's terms must all appear. A
// keyword of several Latin words is one term, a phrase.
func (q *query) keywordAlternatives() [][]lexical.Term {
	var alts [][]lexical.Term
	seen := map[string]bool{}
	add := func(k string) {
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "" || seen[k] {
			return
		}
		seen[k] = true
		if terms := phraseTerms(k); len(terms) > 0 {
			alts = append(alts, terms)
		}
	}
	for _, k := range q.Keywords {
		add(k)
		for _, syn := range q.svc.Config.Synonyms[strings.ToLower(strings.TrimSpace(k))] {
			add(syn)
		}
	}
	return alts
}

// keywordExpr is keywordAlternatives as an FTS5 expression.
func (q *query) keywordExpr() string { return alternativesExpr(q.keywordAlternatives()) }

func alternativesExpr(alts [][]lexical.Term) string {
	var parts []string
	for _, terms := range alts {
		parts = append(parts, "("+lexical.AllExpr(terms)+")")
	}
	return strings.Join(parts, " OR ")
}

// phraseTerms matches k as written: its words in order (one phrase when
// it is all Latin words; each CJK run by its bigrams).
func phraseTerms(k string) []lexical.Term {
	terms := lexical.Terms(k)
	words := make([]string, len(terms))
	for i, t := range terms {
		if t.CJK {
			return terms
		}
		words[i] = t.Text
	}
	if len(terms) <= 1 {
		return terms
	}
	return []lexical.Term{{Text: strings.Join(words, " ")}}
}

// lexical ranks messages by BM25: in memory when the keyword index is
// loaded and can answer, else with FTS5. Both rank the same way.
func (q *query) lexical(ctx context.Context) ([]Result, error) {
	terms, alts := lexical.Terms(q.text), q.keywordAlternatives()
	if len(terms) == 0 && len(alts) == 0 {
		return nil, nil
	}
	hits, ok, err := q.memoryLexical(ctx, terms, alts)
	if err != nil {
		return nil, err
	}
	if !ok {
		if hits, err = q.svc.DB.Lexical(ctx, ftsExpr(terms, alts), q.Filter, q.svc.Config.Window); err != nil {
			return nil, err
		}
	}
	if len(q.named) > 0 {
		for i := range hits {
			hits[i].Score = q.boost(hits[i].AuthorID, hits[i].Score)
		}
		slices.SortStableFunc(hits, func(a, b sqlite.LexicalHit) int { return cmp.Compare(b.Score, a.Score) })
	}
	out := make([]Result, len(hits))
	for i, h := range hits {
		out[i] = Result{SegmentID: h.SegmentID, MessageID: h.MessageID, Score: h.Score,
			Components: map[string]Component{"lexical": {Rank: i + 1, Score: h.Score}}, Ranked: []int64{h.MessageID}}
	}
	return out, nil
}

// ftsExpr is the FTS5 expression for any of the terms and, when there are
// keywords, one of their alternatives.
func ftsExpr(terms []lexical.Term, alts [][]lexical.Term) string {
	expr, kw := lexical.MatchExpr(terms), alternativesExpr(alts)
	switch {
	case expr == "":
		return kw
	case kw == "":
		return expr
	}
	return "(" + expr + ") AND (" + kw + ")"
}

// memoryLexical ranks with the in-memory keyword index, when it is loaded
// and can answer the query (ok).
func (q *query) memoryLexical(ctx context.Context, terms []lexical.Term, alts [][]lexical.Term) (hits []sqlite.LexicalHit, ok bool, err error) {
	mq := lexical.Query{Terms: terms, Required: alts, Limit: q.svc.Config.Window}
	if q.svc.Keywords == nil || !lexical.Supports(mq) {
		return nil, false, nil
	}
	idx, err := q.svc.Keywords.Current(ctx)
	if err != nil || idx == nil {
		return nil, false, err
	}
	if mq.Allow, err = q.svc.DB.Admits(ctx, q.Filter); err != nil {
		return nil, false, err
	}
	found := idx.Search(mq)
	ids := make([]int64, len(found))
	for i, h := range found {
		ids[i] = h.ID
	}
	segs, err := q.svc.DB.SegmentsOf(ctx, ids)
	if err != nil {
		return nil, false, err
	}
	hits = make([]sqlite.LexicalHit, len(found))
	for i, h := range found {
		hits[i] = sqlite.LexicalHit{MessageID: h.ID, SegmentID: segs[h.ID], AuthorID: h.AuthorID, Score: h.Score}
	}
	return hits, true, nil
}

// allowed returns the segments the filters (and, if with, the keywords)
// admit; nil admits all.
func (q *query) allowed(ctx context.Context, withKeywords bool) (map[int64]bool, bool, error) {
	a, err := q.svc.segmentsMatching(ctx, q.version, "", q.Filter)
	if err != nil || !withKeywords {
		return a, false, err
	}
	kw := q.keywordExpr()
	if kw == "" {
		return a, false, nil
	}
	b, err := q.svc.segmentsMatching(ctx, q.version, kw, q.Filter)
	if err != nil {
		return nil, false, err
	}
	if len(b) == 0 {
		return a, true, nil // no segment has the keywords: search without them
	}
	return b, false, nil // b already honours the filter: b = A ∩ B
}

// semantic ranks segments by cosine similarity to the query.
func (q *query) semantic(ctx context.Context, k int) ([]Result, error) {
	allow, _, err := q.allowed(ctx, len(q.Keywords) > 0)
	if err != nil {
		return nil, err
	}
	return q.scan(allow, k), nil
}

func (q *query) scan(allow map[int64]bool, k int) []Result {
	var fn func(int64) bool
	if allow != nil {
		if len(allow) == 0 {
			return nil
		}
		fn = func(id int64) bool { return allow[id] }
	}
	var out []Result
	for i, sc := range q.svc.Matrix.TopK(q.vec, k, fn) {
		if float64(sc.Score) < q.svc.Config.MinSimilarity {
			break
		}
		out = append(out, Result{SegmentID: sc.ID, Score: float64(sc.Score),
			Components: map[string]Component{"semantic": {Rank: i + 1, Score: float64(sc.Score)}}})
	}
	return out
}

// hybrid fuses lexical and semantic rankings with weighted reciprocal
// rank fusion (Cormack et al. 2009), at the segment level:
//
//	RRF(d) = Σ_retriever weight / (k + rank(d))
//
// with k = 60 and each retriever's top Window candidates. Lexical hits
// count for their segment at the rank of its best message. BM25 and cosine
// are never added: their scales differ. Ties break by segment ID.
func (q *query) hybrid(ctx context.Context) ([]Result, error) {
	// The retrievers are independent: run them side by side.
	var lex []Result
	var lexErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		lex, lexErr = q.lexical(ctx)
	}()
	sem, err := q.semantic(ctx, q.svc.Config.Window)
	<-done
	if err == nil {
		err = lexErr
	}
	if err != nil {
		return nil, err
	}
	q.lex, q.sem = lex, sem // for rankMessages
	c := q.svc.Config
	lw, sw := q.weights()
	fused := map[int64]*Result{}
	var order []int64
	get := func(seg int64) *Result {
		r, ok := fused[seg]
		if !ok {
			r = &Result{SegmentID: seg, Components: map[string]Component{}}
			fused[seg] = r
			order = append(order, seg)
		}
		return r
	}
	rank := 0
	for _, h := range lex {
		r := get(h.SegmentID)
		if _, seen := r.Components["lexical"]; seen {
			r.Ranked = append(r.Ranked, h.MessageID) // more hits in this segment
			continue
		}
		rank++
		r.Components["lexical"] = Component{Rank: rank, Score: h.Score}
		r.Score += lw / (c.RRFK + float64(rank))
		r.MessageID = h.MessageID
		r.Ranked = append(r.Ranked, h.MessageID)
	}
	for i, h := range sem {
		r := get(h.SegmentID)
		r.Components["semantic"] = h.Components["semantic"]
		r.Score += sw / (c.RRFK + float64(i+1))
	}
	out := make([]Result, 0, len(order))
	for _, id := range order {
		out = append(out, *fused[id])
	}
	slices.SortFunc(out, func(a, b Result) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.SegmentID, b.SegmentID))
	})
	return out, nil
}

// QueryKind is how a query reads, for weighting hybrid fusion (as
// Slackquery does): exact queries (quoted phrases, identifiers, URLs,
// error strings, a name or two) lean on keywords; conceptual ones
// (questions, descriptions in plain words) lean on meaning.
type QueryKind string

const (
	Exact      QueryKind = "exact"
	Conceptual QueryKind = "conceptual"
	Mixed      QueryKind = "mixed"
)

var exactRE = regexp.MustCompile("[\"`]|https?://|\\w[./:_#@]\\w|\\d|[a-z][A-Z]")

// Classify tells an exact query from a conceptual one.
func Classify(q string) QueryKind {
	words := strings.Fields(q)
	switch {
	case exactRE.MatchString(q) || len(words) <= 2:
		return Exact
	case len(words) >= 4:
		return Conceptual
	}
	return Mixed
}

// weights are the lexical and semantic RRF weights for this query: the
// configured ones, halving the side its kind leans away from.
func (q *query) weights() (lexical, semantic float64) {
	c := q.svc.Config
	switch Classify(q.Query) {
	case Exact:
		return c.LexicalWeight, c.SemanticWeight / 2
	case Conceptual:
		return c.LexicalWeight / 2, c.SemanticWeight
	}
	return c.LexicalWeight, c.SemanticWeight
}

// pipeline is the blog's search: author filter → A; keyword filter → B
// (falling back to no keyword filter when B is empty); exact cosine over
// A ∩ B, top Pool; then message-level rescoring:
//
//	message score = cos(query, message) · min(1, chars/FullChars)
//	final = SegmentWeight · segment score + (1 − SegmentWeight) · best message score
//
// so a conversation that is about the query outranks one that merely
// mentions a word of it, and a bare one-word message cannot carry a
// segment.
func (q *query) pipeline(ctx context.Context, resp *Response) ([]Result, error) {
	allow, fellBack, err := q.allowed(ctx, len(q.Keywords) > 0)
	if err != nil {
		return nil, err
	}
	resp.KeywordFallback = fellBack
	results := q.scan(allow, q.svc.Config.Pool)
	if len(q.Keywords) > 0 && !fellBack {
		results = q.addUnembedded(results, allow)
	}
	ids := make([]int64, len(results))
	for i, r := range results {
		ids[i] = r.SegmentID
	}
	if err := q.rankWithin(ctx, ids); err != nil {
		return nil, err
	}
	w := q.svc.Config.SegmentWeight
	for i := range results {
		r := &results[i]
		seg := r.Score
		ws := q.within[r.SegmentID]
		if ws.bestScore != nil {
			r.Score = w*seg + (1-w)*(*ws.bestScore)
			r.Components["message"] = Component{Rank: 0, Score: *ws.bestScore}
		}
	}
	slices.SortStableFunc(results, func(a, b Result) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.SegmentID, b.SegmentID))
	})
	return results, nil
}

// addUnembedded adds the keyword-matched segments that have no vector
// (too little text to embed: segment.Text), so that a short conversation
// holding the exact word still ranks, by its messages alone.
func (q *query) addUnembedded(results []Result, allow map[int64]bool) []Result {
	if len(allow) > q.svc.Config.Pool {
		return results
	}
	have := map[int64]bool{}
	for _, r := range results {
		have[r.SegmentID] = true
	}
	var ids []int64
	for id := range allow {
		if !have[id] && q.svc.Matrix.Vector(id) == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		results = append(results, Result{SegmentID: id, Components: map[string]Component{"semantic": {}}})
	}
	return results
}

// withinSegment is a segment's messages ranked against the query.
type withinSegment struct {
	messages  []sqlite.StoredMessage // time order
	ranked    []int64                // best first
	bestScore *float64               // nil when no message had a vector
	// scores are the length-weighted similarities of the messages that
	// have a vector.
	scores map[int64]float64
}

// rankWithin scores the messages of each segment (up to RescoreLimit)
// against the query, using stored message vectors and embedding missing
// ones within the time budget.
func (q *query) rankWithin(ctx context.Context, segs []int64) error {
	if q.within == nil {
		q.within = map[int64]*withinSegment{}
	}
	var todo []int64
	for _, id := range segs {
		if _, ok := q.within[id]; !ok && id != 0 {
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	msgs, err := q.svc.DB.SegmentMessages(ctx, todo, q.svc.Config.RescoreLimit)
	if err != nil {
		return err
	}
	var ids []int64
	for _, ms := range msgs {
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
	}
	vecs, err := q.svc.DB.MessageVectors(ctx, ids, len(q.vec))
	if err != nil {
		return err
	}
	q.embedMissing(ctx, msgs, vecs)
	full := float64(q.svc.Config.FullChars)
	for _, seg := range todo {
		ms := msgs[seg]
		ws := &withinSegment{messages: ms, scores: map[int64]float64{}}
		type scored struct {
			id    int64
			score float64
			has   bool
		}
		sc := make([]scored, len(ms))
		for i, m := range ms {
			sc[i] = scored{id: m.ID}
			if v, ok := vecs[m.ID]; ok {
				chars := float64(utf8.RuneCountInString(segment.Clean(m.Content)))
				s := q.boost(m.AuthorID, float64(index.Dot(q.vec, v))*min(1, chars/full))
				sc[i].score, sc[i].has = s, true
				ws.scores[m.ID] = s
				if ws.bestScore == nil || s > *ws.bestScore {
					best := s
					ws.bestScore = &best
				}
			}
		}
		slices.SortStableFunc(sc, func(a, b scored) int {
			if a.has != b.has {
				if a.has {
					return -1
				}
				return 1
			}
			return cmp.Compare(b.score, a.score)
		})
		for _, s := range sc {
			ws.ranked = append(ws.ranked, s.id)
		}
		q.within[seg] = ws
	}
	return nil
}

// embedMissing embeds, within the rescoring budget, messages long enough
// to matter that have no stored vector yet (just imported); on timeout
// they are ranked without one.
func (q *query) embedMissing(ctx context.Context, msgs map[int64][]sqlite.StoredMessage, vecs map[int64][]float32) {
	var ids []int64
	var texts []string
	for _, ms := range msgs {
		for _, m := range ms {
			if _, ok := vecs[m.ID]; ok {
				continue
			}
			if t := segment.Clean(m.Content); utf8.RuneCountInString(t) >= index.MinMessageChars {
				ids = append(ids, m.ID)
				texts = append(texts, t)
			}
		}
	}
	if len(texts) == 0 || q.svc.Config.RescoreBudget <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, q.svc.Config.RescoreBudget)
	defer cancel()
	out, err := q.svc.Embedder.EmbedPassages(ctx, texts)
	if err != nil {
		return
	}
	q.embedded += len(out)
	for i, v := range out {
		vecs[ids[i]] = v
	}
}

// resolveNames finds people the query names, by any name they were seen
// under, takes their names out of the query text, and remembers them
// (and Request.Named) for the author boost. A Korean name may carry a particle (민수가).
func (q *query) resolveNames(ctx context.Context) error {
	names, err := q.svc.DB.AuthorNames(ctx)
	if err != nil {
		return err
	}
	var ids []int64
	q.text, ids = NamesIn(q.Query, names)
	for _, id := range append(ids, q.Named...) {
		if q.named == nil {
			q.named = map[int64]bool{}
		}
		q.named[id] = true
	}
	return nil
}

// NamesIn finds the people a text names, by any of their names (names maps
// lower-cased names to user IDs; a Korean name may carry a particle, as
// in 민수가), and returns the text without those words, and the IDs. A text
// that is nothing but names is returned whole.
func NamesIn(text string, names map[string][]int64) (string, []int64) {
	var ids []int64
	var kept []string
	for _, w := range strings.Fields(text) {
		bare := strings.TrimSuffix(strings.ToLower(strings.Trim(w, ".,!?;:()'\"“”’")), "'s")
		found := matchName(bare, names)
		if found == nil {
			kept = append(kept, w)
			continue
		}
		for _, id := range found {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(kept) == 0 {
		return text, ids
	}
	return strings.Join(kept, " "), ids
}

// matchName returns the users a word names: an exact name, or the longest
// Hangul name it starts with, followed by a particle of one or two
// syllables.
func matchName(w string, names map[string][]int64) []int64 {
	if ids := names[w]; ids != nil {
		return ids
	}
	var best string
	for n := range names {
		if utf8.RuneCountInString(n) >= 2 && len(n) > len(best) && strings.HasPrefix(w, n) &&
			utf8.RuneCountInString(w)-utf8.RuneCountInString(n) <= 2 && hangulOnly(n) {
			best = n
		}
	}
	if best != "" {
		return names[best]
	}
	return nil
}

func hangulOnly(s string) bool {
	for _, r := range s {
		if r < 0xAC00 || r > 0xD7A3 {
			return false
		}
	}
	return true
}

// boost weighs up a score of a message by a person the query names.
func (q *query) boost(author int64, score float64) float64 {
	if q.named[author] && score > 0 {
		return score * (1 + q.svc.Config.AuthorBoost)
	}
	return score
}

// rankMessages ranks the messages behind the results, best first.
//
// Lexical: the BM25 order. Semantic and pipeline: every message of the
// result segments by its own final score, w·segment + (1−w)·message, so
// the right turn of the second-best conversation can outrank small talk in
// the best one. Hybrid: RRF (k = 60) of the lexical order and that message
// order over the semantic segments.
func (q *query) rankMessages(ctx context.Context, results []Result) ([]int64, error) {
	switch q.Mode {
	case Lexical:
		return mergeRanked(nil, flatten(results)), nil
	case Semantic, Pipeline:
		return q.messageScores(ctx, results)
	}
	// Hybrid: the retrievers' lists from hybrid(), fused per message.
	lex, sem := q.lex, q.sem
	semMsgs, err := q.messageScores(ctx, sem)
	if err != nil {
		return nil, err
	}
	c := q.svc.Config
	score := map[int64]float64{}
	var ids []int64
	add := func(list []int64, weight float64) {
		for i, id := range list[:min(len(list), c.Window)] {
			if _, ok := score[id]; !ok {
				ids = append(ids, id)
			}
			score[id] += weight / (c.RRFK + float64(i+1))
		}
	}
	lw, sw := q.weights()
	add(flatten(lex), lw)
	add(semMsgs, sw)
	slices.SortStableFunc(ids, func(a, b int64) int { return cmp.Or(cmp.Compare(score[b], score[a]), cmp.Compare(a, b)) })
	return ids, nil
}

// messageScores ranks every message of the given segment results by
// w·segment cosine + (1−w)·message score; messages without a vector
// follow, by their segment's order.
func (q *query) messageScores(ctx context.Context, results []Result) ([]int64, error) {
	if err := q.rankWithinResults(ctx, results); err != nil {
		return nil, err
	}
	w := q.svc.Config.SegmentWeight
	type scored struct {
		id    int64
		score float64
	}
	var with, without []scored
	for _, r := range results {
		seg := q.windowScores(r)
		ws := q.within[r.SegmentID]
		for _, id := range ws.ranked {
			if s, ok := ws.scores[id]; ok {
				with = append(with, scored{id, w*seg(id) + (1-w)*s})
			} else {
				without = append(without, scored{id, seg(id)})
			}
		}
	}
	order := func(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id)) }
	slices.SortStableFunc(with, order)
	slices.SortStableFunc(without, order)
	out := make([]int64, 0, len(with)+len(without))
	for _, l := range [][]scored{with, without} {
		for _, s := range l {
			out = append(out, s.id)
		}
	}
	return mergeRanked(nil, out), nil
}

// windowScores gives each message of a result its segment score: the
// similarity of the window holding it, for a segment embedded as several
// windows (the tail of a long conversation is not its head), else the
// segment's.
func (q *query) windowScores(r Result) func(message int64) float64 {
	seg := r.Components["semantic"].Score
	var wins []index.WindowScore
	if q.svc.Matrix != nil && q.vec != nil {
		wins = q.svc.Matrix.WindowScores(q.vec, r.SegmentID)
	}
	if len(wins) < 2 {
		return func(int64) float64 { return seg }
	}
	at := map[int64]float64{}
	for i, m := range q.within[r.SegmentID].messages {
		k := len(wins) - 1
		for k > 0 && wins[k].First > i {
			k--
		}
		at[m.ID] = float64(wins[k].Score)
	}
	return func(id int64) float64 { return at[id] }
}

func (q *query) rankWithinResults(ctx context.Context, results []Result) error {
	ids := make([]int64, len(results))
	for i, r := range results {
		ids[i] = r.SegmentID
	}
	return q.rankWithin(ctx, ids)
}

func flatten(results []Result) []int64 {
	var out []int64
	for _, r := range results {
		out = append(out, r.Ranked...)
	}
	return out
}

// mergeRanked keeps first's order, then adds rest's IDs not yet seen.
func mergeRanked(first, rest []int64) []int64 {
	seen := map[int64]bool{}
	out := make([]int64, 0, len(first)+len(rest))
	for _, l := range [][]int64{first, rest} {
		for _, id := range l {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}
