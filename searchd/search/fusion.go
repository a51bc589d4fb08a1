package search

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strings"
)

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
