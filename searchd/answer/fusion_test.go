package answer

import (
	"context"
	"errors"
	"slices"
	"testing"

	"dsearch/searchd/search"
	"dsearch/searchd/sqlite"
)

// fusions are the two fusions of searchAll, by segment and by message,
// over the same ranked IDs.
var fusions = map[string]func(lists [][]int64, weights []float64, question int, k float64) []int64{
	"messages": fuseIDs,
	"segments": func(lists [][]int64, weights []float64, question int, k float64) []int64 {
		results := make([][]search.Result, len(lists))
		for i, l := range lists {
			for _, id := range l {
				results[i] = append(results[i], search.Result{SegmentID: id})
			}
		}
		var out []int64
		for _, r := range fuseResults(results, weights, question, k) {
			out = append(out, r.SegmentID)
		}
		return out
	},
}

func seq(from, n int64) []int64 {
	var out []int64
	for i := range n {
		out = append(out, from+i)
	}
	return out
}

// A bad plan's subqueries, agreeing with each other on what the question
// does not ask, must not push the question's own results down: under
// plain RRF (one vote each) their two votes beat its one, and 101 comes
// first; weighted, the question's ten come first, in its order.
func TestFusionQuestionOutweighsAgreeingSubqueries(t *testing.T) {
	question := seq(1, 10)
	offTopic := seq(101, 10)
	lists := [][]int64{offTopic, slices.Clone(offTopic), question}
	k := DefaultConfig().RRFK
	for name, fuse := range fusions {
		if plain := fuse(lists, fusionWeights(3, 2, 0), 2, k); plain[0] != 101 {
			t.Errorf("%s: plain RRF put %d first; this test no longer shows its failure", name, plain[0])
		}
		got := fuse(lists, fusionWeights(3, 2, DefaultConfig().QuestionWeight), 2, k)
		if !slices.Equal(got[:10], question) {
			t.Errorf("%s: top 10 %v, want the question's %v", name, got[:10], question)
		}
		if !slices.Equal(got[10:], offTopic) {
			t.Errorf("%s: after the question's results %v, want the subqueries' %v", name, got[10:], offTopic)
		}
	}
}

// A good plan still adds evidence: what both subqueries rank first and
// the question only eighth comes first.
func TestFusionSubqueriesLiftTheQuestionsResults(t *testing.T) {
	question := seq(1, 10)
	lists := [][]int64{{8, 101, 102}, {8, 103, 101}, question}
	for name, fuse := range fusions {
		got := fuse(lists, fusionWeights(3, 2, DefaultConfig().QuestionWeight), 2, DefaultConfig().RRFK)
		if got[0] != 8 {
			t.Errorf("%s: %v, want 8 first", name, got)
		}
	}
}

// The rules plan (one subquery, no question index) fuses as plain RRF: its
// one list as it came.
func TestFusionRulesPlanUnchanged(t *testing.T) {
	list := []int64{5, 3, 9, 1}
	for name, fuse := range fusions {
		for _, qw := range []float64{0, 1, 4} {
			w := fusionWeights(1, -1, qw)
			if !slices.Equal(w, []float64{1}) {
				t.Errorf("weights %v", w)
			}
			if got := fuse([][]int64{list}, w, -1, 60); !slices.Equal(got, list) {
				t.Errorf("%s: %v, want %v", name, got, list)
			}
		}
	}
	if w := fusionWeights(3, -1, 4); !slices.Equal(w, []float64{1, 1, 1}) {
		t.Errorf("without the question: weights %v, want plain RRF", w)
	}
	if w := fusionWeights(4, 3, 1); !slices.Equal(w, []float64{1, 1, 1, 3}) {
		t.Errorf("the question beside three subqueries: weights %v, want 3 for it", w)
	}
}

// A plan of four subqueries and the question pages, the question's
// weight carried by the cursor: its second page is the second result of
// the whole answer. A cursor naming a subquery that is not there is
// refused.
func TestCursorCarriesTheQuestion(t *testing.T) {
	plan := `json:{"subqueries":["new apartment","boiler broke","apartment boiler","the apartment"],"keywords":[]}`
	s, _ := setup(t, &fakeOllama{script: []string{plan, plan}})
	s.Config.KeepQuestion = true
	ctx := context.Background()
	q := "what happened with the apartment and the boiler?"
	first, err := s.Query(ctx, Request{Question: q, Limit: 1, NoSummary: true})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := s.Query(ctx, Request{Question: q, NoSummary: true})
	if err != nil {
		t.Fatal(err)
	}
	if first.PlanSource != "llm" || len(first.Plan.Subqueries) != 5 || len(whole.Results) < 2 || first.NextCursor == "" {
		t.Fatalf("plan %s %q, %d results, cursor %q", first.PlanSource, first.Plan.Subqueries, len(whole.Results), first.NextCursor)
	}
	second, err := s.Query(ctx, Request{Question: q, Limit: 1, Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if second.Results[0].SegmentID != whole.Results[1].SegmentID || second.Results[0].Score != whole.Results[1].Score {
		t.Errorf("second page %+v, want %+v", second.Results[0], whole.Results[1])
	}
	var c queryCursor
	version, _ := s.DB.IndexVersion(ctx)
	if err := search.DecodeCursor(first.NextCursor, &c, version, fingerprint(q, sqlite.Filter{}, nil)); err != nil || c.Question != 5 {
		t.Fatalf("cursor %+v, %v: want the question as subquery 5", c, err)
	}
	for _, bad := range []int{6, -1} {
		c.Question = bad
		_, err := s.Query(ctx, Request{Question: q, Cursor: search.EncodeCursor(c)})
		var ie *search.InputError
		if !errors.As(err, &ie) {
			t.Errorf("question %d in a cursor: error %v, want an input error", bad, err)
		}
	}
}
