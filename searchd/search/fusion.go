package search

import (
	"cmp"
	"context"
	"math"
	"regexp"
	"slices"
	"strings"
)

// Hybrid search fuses the lexical and the semantic ranking by their
// scores, each standardized over that retriever's own top Window
// candidates (CombSUM of z-scores):
//
//	fused(d) = lw · z_lexical(d) + sw · z_semantic(d)    (0 for a list without d)
//
// Rank fusion (RRF, k = 60) gave a retriever's first hit as much as the
// other's, whatever their scores said, so hybrid lost to the better of its
// parts wherever one side was weak: by 8 points on English conversations
// and by 21 and 31 on Korean questions with an English model
// (docs/retrieval.md has the table that chose this). A z-score keeps what
// each retriever knows: a candidate far above its list's others counts for
// much, a flat list for little. An exact query (quotes, identifiers, a word
// or two) asks for its words: candidates holding them come first, in
// fused order.
//
// A query the model cannot read (Config.MinReading: less than half its
// letters in the model's pieces of words, as Korean is to an English
// model) has a semantic list that stands out from itself as much as a
// readable query's, ranked by nothing the model knows: z-scores cannot
// tell, so the reading decides. Then the lexical candidates come first,
// in lexical order, and the semantic side only orders the candidates
// lexical did not find, after them (on Korean sets with the English
// model, hybrid had lost 3 and 15 points to lexical; docs/retrieval.md).
//
// The lexical side counts only when it found what the query says: one
// of its first hits holds Config.LexicalSupport (a quarter) of the
// query's content words. A translation shares a name or a number with
// its query and nothing else; hits on those alone, two or three of them,
// stand out from each other by z-scores of ±1 whatever their BM25, and
// an exact query's would all come first. They are noise: hybrid then
// ranks by meaning alone (lexicalLeftOut). On xling-dev that was
// hybrid's loss to semantic (MRR 0.964 against 0.972); on the other
// sets few queries have so little lexical evidence
// (docs/retrieval.md, "Fusion").
func (q *query) hybrid(ctx context.Context) ([]Result, error) {
	// The retrievers are independent: run them side by side.
	lexical := q.lexicalAhead
	if lexical == nil {
		lexical = q.startLexical(ctx)
	}
	sem, err := q.semantic(ctx, q.svc.Config.Window)
	lex, lexErr := lexical()
	if err == nil {
		err = lexErr
	}
	if err != nil {
		return nil, err
	}
	q.lex, q.sem = lex, sem // for rankMessages
	if q.lexicalLeftOut, err = q.lexicalTooLittle(ctx, lex); err != nil {
		return nil, err
	}

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
	// A segment counts in the lexical list once, by its best hit.
	var lexSegs []candidate
	for _, h := range lex {
		if q.lexicalLeftOut {
			break
		}
		r := get(h.SegmentID)
		if _, seen := r.Components["lexical"]; seen {
			r.Ranked = append(r.Ranked, h.MessageID) // more hits in this segment
			continue
		}
		lexSegs = append(lexSegs, candidate{h.SegmentID, h.Score})
		r.Components["lexical"] = Component{Rank: len(lexSegs), Score: h.Score}
		r.MessageID = h.MessageID
		r.Ranked = append(r.Ranked, h.MessageID)
	}
	semSegs := make([]candidate, len(sem))
	for i, h := range sem {
		get(h.SegmentID).Components["semantic"] = h.Components["semantic"]
		semSegs[i] = candidate{h.SegmentID, h.Score}
	}
	scores := q.fuse(lexSegs, semSegs)
	out := make([]Result, 0, len(order))
	isHit := func(id int64) bool { _, ok := fused[id].Components["lexical"]; return ok }
	for _, id := range fusedOrder(scores, isHit, q.hitsFirst()) {
		r := fused[id]
		r.Score = scores[id]
		out = append(out, *r)
	}
	return out, nil
}

// startLexical runs the keyword search on its own goroutine; the function
// it returns waits for its results.
func (q *query) startLexical(ctx context.Context) func() ([]Result, error) {
	var lex []Result
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		lex, err = q.lexical(ctx)
	}()
	return func() ([]Result, error) {
		<-done
		return lex, err
	}
}

// hybridMessages fuses the lexical hits and the semantic results'
// messages as hybrid fuses segments.
func (q *query) hybridMessages(ctx context.Context) ([]int64, error) {
	scored, err := q.scoredMessages(ctx, q.sem)
	if err != nil {
		return nil, err
	}
	var lexMsgs, semMsgs []candidate
	hit := map[int64]bool{}
	for _, r := range q.lex {
		if !hit[r.MessageID] {
			hit[r.MessageID] = true
			lexMsgs = append(lexMsgs, candidate{r.MessageID, r.Score})
		}
	}
	for _, s := range scored {
		if s.has { // the others have no score of their own
			semMsgs = append(semMsgs, candidate{s.id, s.score})
		}
	}
	if q.Candidates {
		q.candidates = map[string][]Scored{"lexical": scoredList(lexMsgs), "semantic": scoredList(semMsgs)}
	}
	if q.lexicalLeftOut {
		lexMsgs = nil // listed among the candidates, not fused
	}
	return fusedOrder(q.fuse(lexMsgs, semMsgs), func(id int64) bool { return hit[id] }, q.hitsFirst()), nil
}

// hitsFirst: the lexical hits come first in the fused order, for an
// exact query or one the model cannot read, when the lexical side counts.
func (q *query) hitsFirst() bool { return !q.lexicalLeftOut && (q.exact() || q.unread) }

// supportHits are the lexical hits looked at for the query's words.
const supportHits = 10

// lexicalTooLittle says whether none of the first lexical hits holds
// Config.LexicalSupport of the query's content words (support, as a
// result's confidence counts them). A query the model cannot read
// keeps its lexical side whatever it holds: it is all there is.
func (q *query) lexicalTooLittle(ctx context.Context, lex []Result) (bool, error) {
	least := q.svc.Config.LexicalSupport
	terms := q.contentTerms()
	if q.unread || least <= 0 || len(lex) == 0 || len(terms) == 0 {
		return false, nil
	}
	ids := make([]int64, 0, supportHits)
	for _, r := range lex[:min(len(lex), supportHits)] {
		ids = append(ids, r.MessageID)
	}
	msgs, err := q.messages(ctx, ids)
	if err != nil {
		return false, err
	}
	for _, id := range ids {
		if support(terms, nil, []string{msgs[id].Content}) >= least {
			return false, nil
		}
	}
	return true, nil
}

func scoredList(cs []candidate) []Scored {
	out := make([]Scored, len(cs))
	for i, c := range cs {
		out[i] = Scored{c.id, c.score}
	}
	return out
}

// fusedOrder ranks the fused IDs, best first, ties by ID; for an exact
// query the lexical hits first.
func fusedOrder(scores map[int64]float64, hit func(int64) bool, exact bool) []int64 {
	ids := make([]int64, 0, len(scores))
	for id := range scores {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int64) int {
		if exact && hit(a) != hit(b) {
			if hit(a) {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(scores[b], scores[a]), cmp.Compare(a, b))
	})
	return ids
}

// candidate is an ID with a retriever's score, best first in its list.
type candidate struct {
	id    int64
	score float64
}

// fuse is the weighted sum of the two lists' z-scores over their first
// Window candidates, for every ID in either; for a query the model cannot
// read, a lexical candidate's lexical part alone.
func (q *query) fuse(lex, sem []candidate) map[int64]float64 {
	c := q.svc.Config
	out := map[int64]float64{}
	lex = lex[:min(len(lex), c.Window)]
	for i, z := range zScores(lex) {
		out[lex[i].id] += c.LexicalWeight * z
	}
	sem = sem[:min(len(sem), c.Window)]
	for i, z := range zScores(sem) {
		if _, found := out[sem[i].id]; q.unread && found {
			continue
		}
		out[sem[i].id] += c.SemanticWeight * z
	}
	return out
}

// zScores standardizes the scores: (s − mean) / standard deviation; all 0
// when they are equal.
func zScores(list []candidate) []float64 {
	z := make([]float64, len(list))
	if len(list) == 0 {
		return z
	}
	var sum, sq float64
	for _, c := range list {
		sum += c.score
	}
	mean := sum / float64(len(list))
	for _, c := range list {
		sq += (c.score - mean) * (c.score - mean)
	}
	sd := math.Sqrt(sq / float64(len(list)))
	if sd == 0 {
		return z
	}
	for i, c := range list {
		z[i] = (c.score - mean) / sd
	}
	return z
}

// exact: the query reads as one asking for its words.
func (q *query) exact() bool { return Classify(q.text) == Exact }

// QueryKind is how a query reads (as Slackquery classifies them): exact
// queries (quoted phrases, identifiers, URLs, error strings, a word or
// two) ask for their words; conceptual ones (questions, descriptions in
// plain words) for a meaning.
type QueryKind string

const (
	Exact      QueryKind = "exact"
	Conceptual QueryKind = "conceptual"
	Mixed      QueryKind = "mixed"
)

var exactRE = regexp.MustCompile("[\"`]|https?://|\\w[./:_#@]\\w|\\d|[a-z][A-Z]")

// Classify tells an exact query from a conceptual one. A sentence of four
// words or more asks for a meaning even when it holds a quote, a number or
// a date ("Mother often says, "You are a lazy boy!"", "what did she paint
// on October 13, 2023?"): they are part of what it says, and its words
// still count by their lexical z-scores, but its lexical hits do not all
// come first. Ranked first, hits on the number 9 or on one quoted word had
// pushed the translation a sentence asked for to second place:
// xling-dev, hybrid MRR 0.949 → 0.959, locomo-dev 0.591 → 0.592,
// ko-qa-dev unchanged (docs/retrieval.md, "Fusion").
func Classify(q string) QueryKind {
	words := strings.Fields(q)
	switch {
	case len(words) >= 4:
		return Conceptual
	case exactRE.MatchString(q) || len(words) <= 2:
		return Exact
	}
	return Mixed
}
