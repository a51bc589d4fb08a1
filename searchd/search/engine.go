package search

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"dsearch/searchd/index"
	"dsearch/searchd/lexical"
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
	defaulted := req.Mode == ""
	if defaulted && s.Embedder == nil {
		req.Mode = Lexical // the default mode without a model; asking for another is an error
	}
	if err := req.Validate(); err != nil {
		return nil, &InputError{err}
	}
	version, err := s.DB.IndexVersion(ctx)
	if err != nil {
		return nil, err
	}
	cursorVersion, err := s.CursorVersion(ctx, req.Filter, req.Readable)
	if err != nil {
		return nil, err
	}
	fp := fingerprint(&req)
	var cur Cursor
	if req.Cursor != "" {
		if err := DecodeCursor(req.Cursor, &cur, cursorVersion, fp); err != nil {
			return nil, &InputError{err}
		}
	}
	resp := &Response{}
	q := &query{Request: req, svc: s, version: version, text: req.Query, terms: lexical.Terms(req.Query + " " + strings.Join(req.Keywords, " "))}
	if s.Config.AuthorBoost > 0 {
		if err := q.resolveNames(ctx); err != nil {
			return nil, err
		}
	}
	if q.Mode != Lexical && s.Embedder != nil {
		resp.Reading = s.Reading(q.text)
		q.unread = resp.Reading < s.Config.MinReading
		resp.Unread = q.unread
		if defaulted && q.unread {
			// The default pipeline ranks by meaning first: for a query
			// the model cannot read that is noise (e5-small-v2 on
			// Korean: 24.7 recall@10 on ko-qa-dev against hybrid's 97.3).
			// The fingerprint is the request's, so its cursors agree.
			q.Mode = Hybrid
		}
	}
	resp.Mode = q.Mode
	var ranked []Result
	switch q.Mode {
	case Lexical:
		ranked, err = q.lexical(ctx)
	default:
		if s.Embedder == nil || s.Matrix == nil {
			return nil, ErrNoModel
		}
		if q.Mode == Hybrid {
			// Its keyword side needs no vector: it runs while the
			// query is embedded.
			q.lexicalAhead = q.startLexical(ctx)
		}
		start := time.Now()
		if err := q.embed(ctx); err != nil {
			if q.lexicalAhead != nil {
				q.lexicalAhead()
			}
			return nil, err
		}
		resp.QueryEmbedTime = time.Since(start)
		switch q.Mode {
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
	resp.KeywordFallback = resp.KeywordFallback || q.lexicalFallback
	resp.LexicalLeftOut = q.lexicalLeftOut
	if q.Mode != Lexical && s.Config.MinSimilarity > 0 && len(ranked) == 0 {
		resp.NoConfidentResults = true
	}
	resp.Total = len(ranked)
	as := BySegment
	if q.Mode == Lexical {
		as = ByMessage
	}
	page, more, err := cur.Page(ranked, req.Limit, as)
	if err != nil {
		return nil, &InputError{err}
	}
	if len(ranked) > 0 {
		confident, err := q.judge(ctx, ranked, page)
		if err != nil {
			return nil, err
		}
		resp.NoConfidentResults = !confident
	}
	if more {
		cur.Version, cur.Fingerprint = cursorVersion, fp
		resp.NextCursor = EncodeCursor(cur)
	}
	if req.RankedMessages {
		if resp.RankedMessages, err = q.rankMessages(ctx, ranked); err != nil {
			return nil, err
		}
		if resp.Candidates = q.candidates; resp.Candidates != nil {
			resp.Kind = Classify(q.text)
		}
	}
	resp.Results = page
	err = q.decorate(ctx, resp.Results)
	resp.EmbeddedMessages = q.embedded
	return resp, err
}

// query is one search in progress.
type query struct {
	// lexicalAhead, if set, waits for the keyword search hybrid started
	// before the query's embedding (startLexical).
	lexicalAhead func() ([]Result, error)
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
	// holdings: each judged result's content words (holdingOf).
	holdings map[resultKey]held
	// candidates are hybrid's message lists, when Request.Candidates.
	candidates map[string][]Scored
	// embedded counts message texts embedded on the fly.
	embedded int
	// lexicalFallback: no message held the query's words and a keyword,
	// so the lexical side searched without the keywords.
	lexicalFallback bool
	// unread: the model reads too little of text for its ranking to
	// count (Config.MinReading).
	unread bool
	// lexicalLeftOut: hybrid's lexical hits hold too little of the query
	// to count (Config.LexicalSupport).
	lexicalLeftOut bool
	// searched are the segments the filters admit (nil: all), narrowed
	// says the scan saw fewer (those with the keywords), and spread is
	// the query's similarity over searched: what a confident result
	// stands out from (confidence.go), leaders the two most similar of
	// searched. content caches contentTerms.
	searched *segmentSet
	narrowed bool
	spread   index.Spread
	leaders  []index.Scored
	content  []lexical.Term
	// read are the messages read so far (messages), around the neighbours
	// of those read with them (messagesAround).
	read   map[int64]sqlite.StoredMessage
	around map[int64][2]int64
	// rarity is how common content's words are (confidence.go's weigh);
	// msgSpread is the query's similarity over the messages rescored.
	rarity rarity
	// audienceIDs are the channels word statistics are counted over
	// (audience), read once.
	audienceOnce sync.Once
	audienceIDs  []int64
	audienceErr  error
	msgSpread    index.Spread
	// self is the query's similarity to itself embedded as a passage:
	// the ceiling a copy of it reaches (0: not measured; measureSelf).
	self float64
}

// Reading is the share of text's letters the model reads as words or
// parts of words (Reader); 1 when the model cannot say.
func (s *Service) Reading(text string) float64 {
	rd, ok := s.Embedder.(Reader)
	if !ok {
		return 1
	}
	r, err := rd.Reading(text)
	if err != nil {
		return 1 // embedding the query failed or will: not the place to say so
	}
	return r
}

// allowed returns the segments the filters (and, if with, the keywords)
// admit; nil admits all.
func (q *query) allowed(ctx context.Context, withKeywords bool) (*segmentSet, bool, error) {
	a, err := q.svc.segmentsMatching(ctx, q.version, q.Filter)
	q.searched = a
	if err != nil || !withKeywords {
		return a, false, err
	}
	alts := q.keywordAlternatives()
	if len(alts) == 0 {
		return a, false, nil
	}
	b, err := q.svc.keywordSegments(ctx, q.version, alts, q.Filter)
	if err != nil {
		return nil, false, err
	}
	if b.len() == 0 {
		return a, true, nil // no segment has the keywords: search without them
	}
	q.narrowed = true
	return b, false, nil // b already honours the filter: b = A ∩ B
}

// semantic ranks segments by cosine similarity to the query.
func (q *query) semantic(ctx context.Context, k int) ([]Result, error) {
	allow, _, err := q.allowed(ctx, len(q.Keywords) > 0)
	if err != nil {
		return nil, err
	}
	return q.scan(ctx, allow, k)
}

// scan ranks the matrix's segments by similarity to the query. The
// matrix follows the database only at the embedding job's next pass, so
// a segment whose messages were deleted, edited, forgotten or opted out
// since it was embedded would still rank by the old text: each top
// segment is checked against the store, and a stale one leaves the
// matrix at once (the job adds it back when it is embedded again).
func (q *query) scan(ctx context.Context, allow *segmentSet, k int) ([]Result, error) {
	if allow != nil && allow.len() == 0 {
		return nil, nil
	}
	// A result is judged against the conversations of the channels
	// searched (reference): when those are all or most of the matrix, one
	// pass gives the top among allow and their spread.
	ref, other, err := q.reference(ctx)
	if err != nil {
		return nil, err
	}
	m := q.svc.Matrix
	together := other && (ref == nil || ref.len() >= m.Len()/8)
	var top, leaders []index.Scored
	var spread index.Spread
	for {
		if together {
			top, spread, leaders = m.TopKSpreadWithin(q.vec, k, allow.admits(), ref.admits())
		} else {
			top, spread = q.topKSpread(allow, k)
			leaders = top[:min(2, len(top))]
			if other {
				// In the loop, not after it: the leaders are checked
				// against the store too, and a stale one means another pass.
				leaders, spread = q.spreadOver(ref)
			}
		}
		// The results, and the leaders they are judged against (a
		// deleted conversation must not make a result look less clear),
		// must be current.
		stale, err := q.dropStale(ctx, top, leaders)
		if err != nil {
			return nil, err
		}
		if !stale {
			break
		}
	}
	q.spread, q.leaders = spread, leaders
	var out []Result
	for i, sc := range top {
		if float64(sc.Score) < q.svc.Config.MinSimilarity {
			break
		}
		out = append(out, Result{SegmentID: sc.ID, Score: float64(sc.Score),
			Components: map[string]Component{"semantic": {Rank: i + 1, Score: float64(sc.Score)}}})
	}
	return out, nil
}

// dropStale takes out of the matrix the rows among lists whose vector
// is no longer the store's (the conversation deleted, or changed and not
// embedded again), and reports whether there were any: each pass of a
// scan removes one row at least.
func (q *query) dropStale(ctx context.Context, lists ...[]index.Scored) (bool, error) {
	var ids []int64
	for _, l := range lists {
		for _, sc := range l {
			ids = append(ids, sc.ID)
		}
	}
	current, err := q.svc.DB.CurrentVectorsOf(ctx, ids)
	if err != nil {
		return false, err
	}
	stale := false
	for _, id := range ids {
		if !current[id] {
			q.svc.Matrix.Delete(id)
			stale = true
		}
	}
	return stale, nil
}

// topKSpread is the matrix's top k among the segments allow admits (nil:
// all), and their spread. A filter that admits under an eighth of the
// matrix has its segments scored by their own rows; a scan reads every
// row (292 MB at 6.5 M messages) and asks allow of each.
func (q *query) topKSpread(allow *segmentSet, k int) ([]index.Scored, index.Spread) {
	m := q.svc.Matrix
	if allow == nil {
		return m.TopKSpread(q.vec, k, nil)
	}
	if allow.len() < m.Len()/8 {
		return m.TopKSpreadAmong(q.vec, k, allow.ids())
	}
	return m.TopKSpread(q.vec, k, allow.has)
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
	results, err := q.scan(ctx, allow, q.svc.Config.Pool)
	if err != nil {
		return nil, err
	}
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
func (q *query) addUnembedded(results []Result, allow *segmentSet) []Result {
	if allow == nil || allow.len() > q.svc.Config.Pool {
		return results
	}
	have := map[int64]bool{}
	for _, r := range results {
		have[r.SegmentID] = true
	}
	var ids []int64
	for _, id := range allow.ids() {
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

// rankMessages ranks the messages behind the results, best first.
//
// Lexical: the BM25 order. Semantic and pipeline: every message of the
// result segments by its own final score, w·segment + (1−w)·message, so
// the right turn of the second-best conversation can outrank small talk in
// the best one. Hybrid: the lexical hits and that message order over the
// semantic segments, fused by z-score (fusion.go).
func (q *query) rankMessages(ctx context.Context, results []Result) ([]int64, error) {
	switch q.Mode {
	case Lexical:
		return mergeRanked(nil, flatten(results)), nil
	case Semantic, Pipeline:
		return q.messageScores(ctx, results)
	}
	return q.hybridMessages(ctx) // the lists hybrid() kept
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
