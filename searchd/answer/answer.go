// Package answer is the outer pipeline of the blog's figure: names to
// authors by rules, the question to a search plan by the local LLM (or by
// rules when it fails), one search per subquery, reciprocal rank fusion,
// and a summary that cites only what was found.
package answer

import (
	"context"
	"errors"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"dsearch/searchd/internal/privlog"
	"dsearch/searchd/llm"
	"dsearch/searchd/search"
	"dsearch/searchd/sqlite"
)

// LLM completes prompts; llm.Client implements it.
type LLM interface {
	Complete(ctx context.Context, r llm.Request) (string, error)
}

// Config bounds the pipeline.
type Config struct {
	PlanTimeout    time.Duration // 20 s
	SummaryTimeout time.Duration // 60 s
	Parallel       int           // searches at once: 4
	PerSubquery    int           // results kept per subquery before fusion: 20
	Summarize      int           // results the summary sees: 8
	RRFK           float64       // 60
	// KeepQuestion searches the question too beside the LLM's subqueries,
	// so that a plan that misses the point cannot lose what the rules
	// plan finds.
	KeepQuestion bool
	// QuestionWeight is how heavily the question's own ranking counts in
	// the fusion against all of the model's subqueries together: 2,
	// twice as much as all of them; 0, one vote like each of them (plain
	// RRF). See fusionWeights.
	QuestionWeight float64
	// PlanCoverage is the share of the question's content words a plan
	// must keep to be taken: 1, all of them.
	PlanCoverage float64
}

// DefaultConfig is the pipeline's default.
func DefaultConfig() Config {
	return Config{PlanTimeout: 20 * time.Second, SummaryTimeout: 60 * time.Second, Parallel: 4,
		PerSubquery: 20, Summarize: 8, RRFK: 60, KeepQuestion: true, QuestionWeight: 2, PlanCoverage: 1}
}

// Service answers questions. LLM may be nil: then plans come from rules
// and there is no summary.
type Service struct {
	DB     *sqlite.DB
	Search *search.Service
	LLM    LLM
	Config Config
	// Aliases are user-defined names (nicknames, short forms) → user IDs,
	// added to every name the user was seen under.
	Aliases map[string][]int64
	// Now is the clock relative dates ("last month") count from; nil:
	// time.Now.
	Now func() time.Time
}

// Request is a question with the caller's filters.
type Request struct {
	Question string
	Filter   sqlite.Filter
	// Readable are the channels the audience may read when Filter
	// narrows to fewer (search.Request.Readable).
	Readable       []int64
	Limit          int
	RankedMessages bool
	// Cursor continues an earlier answer's results (Response.NextCursor):
	// its plan is searched again without asking the LLM, and there is no
	// summary.
	Cursor string
	// NoSummary stops at the results (evaluation of retrieval alone).
	NoSummary bool
}

// Response is a grounded answer.
type Response struct {
	Question string
	// Answer cites results as [n]; empty when there is none, and
	// AnswerError says why.
	Answer      string
	AnswerError string
	Plan        Plan
	PlanSource  string // "llm" or "rules"
	PlanError   string
	Authors     []int64 // resolved from names in the question
	// Since and Until are the time a date in the question named, as
	// searched (µs, inclusive; 0 when it named none). TimeFallback: it
	// named one, but nothing was found then (or the caller's filter
	// excludes it), so the search went without it.
	Since, Until int64
	TimeFallback bool
	Results      []search.Result
	NoResults    bool
	// NoConfidentResults: none of the first results clearly matches
	// (search.Confidence): there is no summary, and the results are the
	// closest found, with low confidence.
	NoConfidentResults bool
	// RankedMessages fuses the subqueries' ranked messages (RRF), when
	// the request asks for them (evaluation).
	RankedMessages []int64
	// NextCursor fetches the next page of results; empty on the last.
	NextCursor string
	// Offset is the rank of Results[0] among all results, from 0.
	Offset int
}

func inputErr(msg string) error { return &search.InputError{Err: errors.New(msg)} }

var (
	mentionRE = regexp.MustCompile(`<@!?(\d+)>`)
	idRE      = regexp.MustCompile(`\b\d{15,20}\b`)
)

// Query runs the whole pipeline. Only a bad request is an error: a dead,
// slow or confused LLM degrades to a rule-based plan and no summary.
func (s *Service) Query(ctx context.Context, req Request) (*Response, error) {
	q := strings.TrimSpace(req.Question)
	if q == "" {
		return nil, inputErr("question is required")
	}
	if len(q) > 1000 {
		return nil, inputErr("question is over 1,000 bytes")
	}
	version, err := s.Search.CursorVersion(ctx, req.Filter, req.Readable)
	if err != nil {
		return nil, err
	}
	// A narrow audience's keyword search waits for the keyword index:
	// when it is still loading, say so before the LLM plans for nothing.
	if err := s.Search.AwaitKeywords(ctx, req.Readable, req.Filter.Channels); err != nil {
		return nil, err
	}
	if req.Cursor != "" {
		return s.nextPage(ctx, q, req, version)
	}
	resp := &Response{Question: q}
	names, err := s.names(ctx, req.Filter.Channels)
	if err != nil {
		return nil, err
	}
	// 1. Names and raw mentions are people to weigh up, by rules.
	text, authors := resolveAuthors(q, names)
	resp.Authors = authors
	nameSet := map[string]bool{}
	for n := range names {
		nameSet[n] = true
	}
	// 2. Plan.
	llmDown := false
	question := -1 // the index of the question's own subquery in an LLM plan
	if s.LLM != nil {
		pctx, cancel := context.WithTimeout(ctx, s.Config.PlanTimeout)
		p, err := planWithLLM(pctx, s.LLM, text, nameSet, s.Config.PlanCoverage)
		// langchaingo may answer "" without an error when the deadline
		// cuts its stream: out of time all the same.
		outOfTime := pctx.Err() != nil
		cancel()
		if err == nil {
			if t := strings.TrimSpace(text); s.Config.KeepQuestion && t != "" {
				if question = slices.Index(p.Subqueries, t); question < 0 {
					p.Subqueries, question = append(p.Subqueries, t), len(p.Subqueries)
				}
			}
			resp.Plan, resp.PlanSource = *p, "llm"
		} else {
			// Shown with the results (a public answer too): the quoted
			// parts of the model's output, which a decoder's error
			// repeats, are withheld.
			resp.PlanError = privlog.Redact(err.Error())
			// Unreachable or out of time: do not wait for it again.
			var ne net.Error
			llmDown = errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || outOfTime
		}
	} else {
		resp.PlanError = "no LLM configured"
	}
	if resp.PlanSource == "" {
		resp.Plan, resp.PlanSource = *planByRules(text, s.Search.Config.Synonyms), "rules"
	}
	// 3. Search each subquery, 4. fuse: within the time a date in the
	// question names, if anything was found then. The people it names
	// are weighed up (search.Request.Named), not required: as the blog's
	// author filter (set A, the conversations they spoke in) they lost
	// what was said to them, or in a conversation split from theirs
	// (locomo-dev, recall@50 89.9 against hybrid's 90.8; without the
	// filter 92.1, and better at every cut-off: docs/answers.md).
	filter := req.Filter
	var results []search.Result
	var ranked []int64
	confident := false
	if when, dated := timeIn(q, s.now()); dated {
		if timed, ok := when.narrow(filter); ok {
			if results, ranked, confident, err = s.searchAll(ctx, resp.Plan, question, timed, req.Readable, authors, req.RankedMessages); err != nil {
				return nil, err
			}
			if len(results) > 0 {
				resp.Since, resp.Until = timed.Since, timed.Until
			}
		}
		resp.TimeFallback = len(results) == 0
	}
	if len(results) == 0 {
		if results, ranked, confident, err = s.searchAll(ctx, resp.Plan, question, filter, req.Readable, authors, req.RankedMessages); err != nil {
			return nil, err
		}
	}
	resp.RankedMessages = ranked
	next := queryCursor{Cursor: search.Cursor{Version: version, Fingerprint: fingerprint(q, req.Filter, req.Readable)},
		Plan: resp.Plan, Question: question + 1, Source: resp.PlanSource, Authors: authors, Since: resp.Since, Until: resp.Until}
	page, more, err := next.Page(results, pageSize(req.Limit), search.BySegment)
	if err != nil {
		return nil, err
	}
	resp.Results = page
	if more {
		resp.NextCursor = search.EncodeCursor(next)
	}
	if len(resp.Results) == 0 {
		resp.NoResults = true
		resp.AnswerError = "nothing relevant was found"
		return resp, nil
	}
	// 5. Summarize: never from results that do not clearly match.
	resp.NoConfidentResults = !confident
	if req.NoSummary {
		return resp, nil
	}
	if !confident {
		resp.AnswerError = "nothing clearly matched the question: the closest results, with low confidence, and no summary"
		return resp, nil
	}
	if s.LLM == nil {
		resp.AnswerError = "no LLM configured: results only"
		return resp, nil
	}
	if llmDown {
		resp.AnswerError = "the LLM is unreachable or too slow: results only (" + resp.PlanError + ")"
		return resp, nil
	}
	sctx, cancel := context.WithTimeout(ctx, s.Config.SummaryTimeout)
	defer cancel()
	given := resp.Results[:min(len(resp.Results), s.Config.Summarize)]
	input, shown := summaryInput(q, given)
	answer, err := s.LLM.Complete(sctx, llm.Request{System: summaryPrompt, Prompt: input,
		Temperature: 0.3, MaxTokens: summaryTokens})
	if err != nil {
		resp.AnswerError = "the LLM did not answer: " + err.Error()
		return resp, nil
	}
	answer = strings.TrimSpace(answer)
	if err := checkSummary(answer, q, input, shown); err != nil {
		resp.AnswerError = err.Error() + ": results only"
		return resp, nil
	}
	if namesUnshown(answer, input, shownAuthors(given), names) {
		resp.AnswerError = "the summary names someone the results do not: results only"
		return resp, nil
	}
	resp.Answer = answer
	return resp, nil
}

// searchAll runs the plan's subqueries (in hybrid mode: mode), a few at a time,
// and fuses their rankings by segment, and their ranked messages, with
// weighted RRF (k = 60; fusionWeights). question is the index of the
// question's own subquery in an LLM plan, or -1.
//
// It is confident when one of the subqueries' searches is (confident
// results found by any of them), and a fused result is confident when it
// was in any of them.
func (s *Service) searchAll(ctx context.Context, p Plan, question int, f sqlite.Filter, readable, named []int64, ranked bool) ([]search.Result, []int64, bool, error) {
	lists := make([][]search.Result, len(p.Subqueries))
	msgLists := make([][]int64, len(p.Subqueries))
	confident := make([]bool, len(p.Subqueries))
	errs := make([]error, len(p.Subqueries))
	sem := make(chan struct{}, max(s.Config.Parallel, 1))
	var wg sync.WaitGroup
	for i, sq := range p.Subqueries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r, err := s.Search.Search(ctx, search.Request{Query: sq, Keywords: p.Keywords, Filter: f, Readable: readable, Named: named,
				Mode: s.mode(), Limit: s.Config.PerSubquery, RankedMessages: ranked})
			if err == nil {
				lists[i], msgLists[i], confident[i] = r.Results, r.RankedMessages, !r.NoConfidentResults
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, false, err
		}
	}
	weights := fusionWeights(len(lists), question, s.Config.QuestionWeight)
	return fuseResults(lists, weights, question, s.Config.RRFK), fuseIDs(msgLists, weights, question, s.Config.RRFK),
		slices.Contains(confident, true), nil
}

// mode is how a subquery is searched: hybrid, lexical without a model.
// Hybrid holds all the evidence the others have (its semantic side is
// the pipeline's message rescoring, its lexical side BM25, each counted
// by how far its best stand out: search/fusion.go), so the question's
// words count as well as its meaning. The pipeline, the
// default before, ranks by meaning alone once its keyword filter has
// passed, and lost what the question's words find: on held-out
// KorQuAD, whose questions reuse their paragraph's words, recall@1
// 77.4 against hybrid's 85.8 (ko-qa-dev: 82.7 against 88.0); and a
// subquery of a word or two would be ranked by meaning alone
// (korean-dev: recall@10 0.1, against 74.1). Hybrid keeps an exact
// query's word hits first, and ranks a query the model cannot read
// (search.Config.MinReading) by its words.
func (s *Service) mode() search.Mode {
	if s.Search.Embedder == nil {
		return search.Lexical
	}
	return search.Hybrid
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
