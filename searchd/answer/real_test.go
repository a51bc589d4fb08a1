package answer

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"dsearch/searchd/llm"
	"dsearch/searchd/llm/llmtest"
)

// These tests run the pipeline against a real Ollama with real small
// models (make ollama). A 135M or 270M model often plans badly: the point
// is that whatever it says, the pipeline answers well-formed.

func TestMain(m *testing.M) { llmtest.Main(m) }

// recorder passes calls to a real model and keeps what it answered.
type recorder struct {
	inner LLM
	mu    sync.Mutex
	calls []recorded
}

type recorded struct {
	req  llm.Request
	out  string
	err  error
	took time.Duration
}

func (r *recorder) Name() string { return r.inner.(*llm.Client).Name() }

func (r *recorder) Complete(ctx context.Context, req llm.Request) (string, error) {
	start := time.Now()
	out, err := r.inner.Complete(ctx, req)
	r.mu.Lock()
	r.calls = append(r.calls, recorded{req, out, err, time.Since(start)})
	r.mu.Unlock()
	return out, err
}

func (r *recorder) log(t *testing.T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range r.calls {
		t.Logf("call %d (json %v, %s): %q, err %v", i+1, c.req.JSON, c.took.Round(time.Millisecond), c.out, c.err)
	}
}

// realService is setup's database with a real model behind api.
func realService(t *testing.T, api, model string) (*Service, *recorder) {
	t.Helper()
	url := llmtest.URL(t)
	s, _ := setup(t, &fakeOllama{})
	c, err := llm.New(api, url, model, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{inner: c}
	s.LLM = rec
	// Generous timeouts: on a loaded two-core machine a call that takes a
	// second alone can take a minute. TestRealTimeouts sets short ones.
	s.Config = DefaultConfig()
	s.Config.PlanTimeout, s.Config.SummaryTimeout = 3*time.Minute, 3*time.Minute
	t.Cleanup(func() { rec.log(t) })
	return s, rec
}

// refusedSummary reports whether a summary was the model's, refused.
func refusedSummary(answerError string) bool {
	for _, why := range []string{"cited [", "cites no result", "nothing but its citations", "repeats itself", "repeats the prompt", "copies out",
		"language of", "script", "names a year"} {
		if strings.Contains(answerError, why) {
			return true
		}
	}
	return false
}

var realModels = []struct{ name, api, model string }{
	{"smollm2", llm.APIOllama, llmtest.English},
	{"gemma3", llm.APIOllama, llmtest.Multilingual},
	{"smollm2-openai", llm.APIOpenAI, llmtest.English},
}

// The model's plan is taken only when valid and about the question;
// otherwise the rules plan. Either way the boiler conversation is found
// first, the question's name is an author filter and never in the plan,
// and a summary comes back that cites only what it was shown.
func TestRealPlanAndSummary(t *testing.T) {
	for _, m := range realModels {
		t.Run(m.name, func(t *testing.T) {
			s, rec := realService(t, m.api, m.model)
			const q = "what did alex say about the boiler?"
			resp := ask(t, s, q)
			t.Logf("plan %s %+v (%s); answer %q (%s)", resp.PlanSource, resp.Plan, resp.PlanError, resp.Answer, resp.AnswerError)
			first := rec.calls[0]
			if !first.req.JSON || first.req.Temperature != 0 || first.req.System != planPrompt || first.err != nil {
				t.Errorf("plan call: json %v, temperature %v, err %v", first.req.JSON, first.req.Temperature, first.err)
			}
			switch resp.PlanSource {
			case "llm":
				p := resp.Plan
				if err := p.validate(map[string]bool{"alex": true}); err != nil {
					t.Errorf("the model's plan was taken but is invalid: %v", err)
				}
				if err := p.groundIn("what did say about the boiler?", s.Config.PlanCoverage); err != nil || len(p.Subqueries) != len(resp.Plan.Subqueries) {
					t.Errorf("the model's plan was taken but is off-topic: %v", err)
				}
			case "rules":
				want := planByRules("what did say about the boiler?", nil)
				if resp.PlanError == "" || strings.Join(resp.Plan.Subqueries, "|") != strings.Join(want.Subqueries, "|") {
					t.Errorf("fallback: plan %+v, error %q; want the rules plan and why", resp.Plan, resp.PlanError)
				}
				if strings.Contains(resp.PlanError, "deadline") || strings.Contains(resp.PlanError, "refused") {
					t.Errorf("the real model was not reached in time: %s", resp.PlanError)
				}
			default:
				t.Fatalf("plan source %q", resp.PlanSource)
			}
			if len(resp.Authors) != 1 || resp.Authors[0] != 10 {
				t.Errorf("authors %v, want alex (10)", resp.Authors)
			}
			if len(resp.Results) == 0 || resp.Results[0].SegmentID != 2 {
				t.Fatalf("results %+v, want the boiler conversation first", resp.Results)
			}
			if resp.Answer == "" {
				if !refusedSummary(resp.AnswerError) {
					t.Errorf("no answer from a live model: %s", resp.AnswerError)
				}
			} else if input, shown := summaryInput(resp.Question, resp.Results[:min(len(resp.Results), s.Config.Summarize)]); checkSummary(resp.Answer, resp.Question, input, shown) != nil {
				t.Errorf("answer %q taken: %v", resp.Answer, checkSummary(resp.Answer, resp.Question, input, shown))
			}
			last := rec.calls[len(rec.calls)-1]
			if last.req.JSON || last.req.System != summaryPrompt || !strings.Contains(last.req.Prompt, "[1]") ||
				!strings.Contains(last.req.Prompt, "call a plumber for the boiler") {
				t.Errorf("summary request: json %v, prompt %q", last.req.JSON, last.req.Prompt)
			}
		})
	}
}

// Catch-up with real models: each conversation gets a one-line summary of
// at most 200 characters and 5 keywords, or, once the model fails, none
// do and the response says why; what was summarized comes from the cache
// the second time, without a call.
func TestRealCatchup(t *testing.T) {
	for _, m := range realModels[:2] {
		t.Run(m.name, func(t *testing.T) {
			s, rec := realService(t, m.api, m.model)
			ctx := context.Background()
			resp, err := s.Catchup(ctx, CatchupRequest{Channel: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Conversations) != 2 {
				t.Fatalf("%d conversations, want 2", len(resp.Conversations))
			}
			summarized := 0
			for i, c := range resp.Conversations {
				t.Logf("conversation %d: %q %q", i, c.Summary, c.Keywords)
				if c.Summary == "" {
					continue
				}
				summarized++
				if utf8.RuneCountInString(c.Summary) > 200 || len(c.Keywords) > 5 || c.Cached || strings.HasPrefix(c.Summary, "<") {
					t.Errorf("conversation %d: summary of %d characters, %d keywords, cached %v", i, utf8.RuneCountInString(c.Summary), len(c.Keywords), c.Cached)
				}
			}
			// A line refused (not the JSON asked for, a placeholder, an
			// echo, a copy, another language), or an empty answer.
			if summarized < 2 && !strings.Contains(resp.SummaryError, "refused") && !strings.Contains(resp.SummaryError, "empty answer") {
				t.Errorf("%d of 2 summarized, error %q", summarized, resp.SummaryError)
			}
			if summarized < 2 && strings.Contains(resp.SummaryError, `"`) {
				t.Errorf("the error quotes the model: %s", resp.SummaryError)
			}
			calls := len(rec.calls)
			if summarized == 0 {
				return
			}
			again, err := s.Catchup(ctx, CatchupRequest{Channel: 1})
			if err != nil {
				t.Fatal(err)
			}
			cached := 0
			for _, c := range again.Conversations {
				if c.Cached {
					cached++
				}
			}
			if cached != summarized || len(rec.calls) > calls+2-summarized {
				t.Errorf("second call: %d cached of %d summarized, %d more calls", cached, summarized, len(rec.calls)-calls)
			}
		})
	}
}

// A real model slower than the plan timeout: rules plan at once and no
// summary (nothing waits on it twice); slower than the summary timeout:
// results alone. The server answers normally afterwards.
func TestRealTimeouts(t *testing.T) {
	s, rec := realService(t, llm.APIOllama, llmtest.Multilingual)
	const q = "what did alex say about the boiler?"
	s.Config.PlanTimeout = 30 * time.Millisecond
	start := time.Now()
	resp := ask(t, s, q)
	took := time.Since(start)
	if resp.PlanSource != "rules" || !strings.Contains(resp.PlanError, "deadline") ||
		!strings.Contains(resp.AnswerError, "too slow") || len(rec.calls) != 1 || len(resp.Results) == 0 {
		t.Errorf("plan timeout: %s plan (%s), answer error %q, %d calls, %d results", resp.PlanSource, resp.PlanError, resp.AnswerError, len(rec.calls), len(resp.Results))
	}
	if took > 3*time.Second {
		t.Errorf("plan timeout of 30ms took %s", took)
	}
	long := 3 * time.Minute
	s.Config.PlanTimeout, s.Config.SummaryTimeout = long, 30*time.Millisecond
	start = time.Now()
	resp = ask(t, s, q)
	if resp.Answer != "" || !strings.Contains(resp.AnswerError, "did not answer") || !strings.Contains(resp.AnswerError, "deadline") {
		t.Errorf("summary timeout: answer %q, error %q", resp.Answer, resp.AnswerError)
	}
	if last := rec.calls[len(rec.calls)-1]; last.req.JSON || last.took > 3*time.Second {
		t.Errorf("summary call: json %v, took %s with a 30ms timeout", last.req.JSON, last.took)
	}
	s.Config.SummaryTimeout = long
	if resp := ask(t, s, q); resp.Answer == "" && !refusedSummary(resp.AnswerError) {
		t.Errorf("after the timeouts: no answer: %s", resp.AnswerError)
	}
}
