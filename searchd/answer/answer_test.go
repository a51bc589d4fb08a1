package answer

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/index"
	"dsearch/searchd/llm"
	"dsearch/searchd/search"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
	"dsearch/searchd/sqlite/sqlitetest"
)

// fakeOllama speaks Ollama's /api/chat: each call takes the next scripted
// behaviour, and every request is recorded.
type fakeOllama struct {
	mu       sync.Mutex
	script   []string // "json:<content>", "text:<content>", "empty", "cut", "slow", "404"
	requests []chatRequest
}

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Format   string `json:"format"`
	Messages []struct {
		Role, Content string
	} `json:"messages"`
	Options struct {
		Temperature float64 `json:"temperature"`
	} `json:"options"`
}

func (f *fakeOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/chat" || r.Method != "POST" {
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &req)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	step := "text:ok"
	if len(f.script) > 0 {
		step, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	reply := func(content string, done bool) string {
		b, _ := json.Marshal(map[string]any{"model": req.Model, "created_at": time.Now().Format(time.RFC3339),
			"message": map[string]string{"role": "assistant", "content": content}, "done": done})
		return string(b)
	}
	kind, content, _ := strings.Cut(step, ":")
	switch kind {
	case "json", "text":
		if req.Stream { // NDJSON chunks, as Ollama streams
			w.Write([]byte(reply(content[:len(content)/2], false) + "\n" + reply(content[len(content)/2:], false) + "\n" + reply("", true) + "\n"))
			return
		}
		w.Write([]byte(reply(content, true)))
	case "empty":
		w.Write([]byte(reply("", true)))
	case "cut": // the connection drops mid-answer
		w.Write([]byte(reply("partial", true)[:20]))
	case "slow":
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	case "404":
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"model \"exaone3.5:7.8b\" not found, try pulling it first"}`))
	}
}

var t0 = time.Date(2025, 3, 3, 12, 0, 0, 0, time.UTC)

func setup(t *testing.T, f *fakeOllama) (*Service, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	msg := func(id, author int64, name string, off time.Duration, text string) searchd.Message {
		return searchd.Message{ID: id, ChannelID: 1, CreatedAt: t0.Add(off).UnixMicro(), Content: text, Type: "Default",
			Author: searchd.Author{ID: author, Username: name}}
	}
	b := &searchd.Batch{Messages: []searchd.Message{
		msg(1, 10, "alex", 0, "I am moving to a new apartment next month"),
		msg(2, 11, "minsu", time.Minute, "congrats on the new apartment"),
		msg(3, 11, "minsu", 5*time.Hour, "the boiler broke, no hot water"),
		msg(4, 10, "alex", 5*time.Hour+time.Minute, "call a plumber for the boiler"),
	}}
	if _, err := db.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	o, err := llm.New(llm.APIOllama, srv.URL, "exaone3.5:7.8b", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.PlanTimeout, cfg.SummaryTimeout = 500*time.Millisecond, 500*time.Millisecond
	// The tests check the model's plan as it came, paraphrases allowed.
	cfg.KeepQuestion, cfg.PlanCoverage = false, 0.5
	return &Service{DB: db, Search: &search.Service{DB: db, Config: search.DefaultConfig()}, LLM: o, Config: cfg}, srv
}

func ask(t *testing.T, s *Service, q string) *Response {
	t.Helper()
	resp, err := s.Query(context.Background(), Request{Question: q})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestGoodPlanAndSummary(t *testing.T) {
	f := &fakeOllama{script: []string{`json:{"subqueries":["boiler broke","boiler repair"],"keywords":[]}`, "text:The boiler broke [1]."}}
	s, _ := setup(t, f)
	resp := ask(t, s, "what did alex say about the boiler?")
	if resp.PlanSource != "llm" || len(resp.Plan.Subqueries) != 2 || resp.Answer != "The boiler broke [1]." || len(resp.Results) == 0 {
		t.Fatalf("response: %+v", resp)
	}
	if len(resp.Authors) != 1 || resp.Authors[0] != 10 {
		t.Errorf("authors %v: alex is user 10", resp.Authors)
	}
	if !slices.ContainsFunc(resp.Results[0].Previews, func(m sqlite.StoredMessage) bool { return m.ID == 4 }) {
		t.Errorf("first result %+v: want the talk holding alex's message 4 about the boiler", resp.Results[0])
	}
	if len(f.requests) != 2 {
		t.Fatalf("%d requests, want plan and summary", len(f.requests))
	}
	plan, sum := f.requests[0], f.requests[1]
	if plan.Model != "exaone3.5:7.8b" || plan.Format != "json" || plan.Options.Temperature != 0 ||
		len(plan.Messages) != 2 || plan.Messages[0].Role != "system" || !strings.Contains(plan.Messages[0].Content, "subqueries") {
		t.Errorf("plan request: %+v", plan)
	}
	if strings.Contains(strings.ToLower(plan.Messages[1].Content), "alex") {
		t.Errorf("the name went to the planner: %q", plan.Messages[1].Content)
	}
	if sum.Format != "" || sum.Options.Temperature != 0.3 || !strings.Contains(sum.Messages[0].Content, "Do not invent") ||
		!strings.Contains(sum.Messages[1].Content, "[1]") || !strings.Contains(sum.Messages[1].Content, "boiler") {
		t.Errorf("summary request: %+v", sum)
	}
}

func TestPlanFailures(t *testing.T) {
	tests := []struct {
		name     string
		script   []string
		requests int    // made to the fake
		planErr  string // in PlanError
		answered bool
	}{
		{"malformed twice", []string{"text:not json", `json:{"subqueries": [`, "text:answer [1]"}, 3, "not the JSON", true},
		{"malformed then good", []string{"text:nope", `json:{"subqueries":["boiler"],"keywords":[]}`, "text:answer [1]"}, 3, "", true},
		// The model's own words, as the decoder quotes them, are no reason
		// to show: a public answer carries the plan's error.
		{"unknown fields", []string{`json:{"what the boiler said":1}`, `json:{"what the boiler said":1}`, "text:answer [1]"}, 3, "not the JSON", true},
		{"a name in the plan", []string{`json:{"subqueries":["minsu boiler"],"keywords":[]}`, `json:{"subqueries":["minsu"],"keywords":[]}`, "text:answer [1]"}, 3, "names a person", true},
		{"too many subqueries", []string{`json:{"subqueries":["a","b","c","d","e"],"keywords":[]}`, "empty", "text:answer [1]"}, 3, "5 subqueries", true},
		{"empty answers", []string{"empty", "empty", "text:answer [1]"}, 3, "empty answer", true},
		{"cut stream", []string{"cut", "cut", "text:answer [1]"}, 3, "", true},
		{"slow", []string{"slow", "slow"}, 1, "deadline", false},
		{"missing model", []string{"404", "404", "404"}, 3, "not found", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeOllama{script: tt.script}
			s, _ := setup(t, f)
			start := time.Now()
			resp := ask(t, s, "the boiler broke")
			if tt.planErr != "" && !strings.Contains(resp.PlanError, tt.planErr) {
				t.Errorf("plan error %q, want %q", resp.PlanError, tt.planErr)
			}
			if strings.Contains(resp.PlanError, "boiler said") || strings.Contains(resp.AnswerError, "boiler said") {
				t.Errorf("the model's output is quoted in the errors shown: %q, %q", resp.PlanError, resp.AnswerError)
			}
			if tt.planErr != "" && (resp.PlanSource != "rules" || resp.Plan.Subqueries[0] != "the boiler broke") {
				t.Errorf("no rule-based fallback: %+v", resp.Plan)
			}
			if len(resp.Results) == 0 {
				t.Error("no results")
			}
			if got := len(f.requests); got != tt.requests {
				t.Errorf("%d requests to Ollama, want %d", got, tt.requests)
			}
			if (resp.Answer != "") != tt.answered || (resp.Answer == "" && resp.AnswerError == "") {
				t.Errorf("answer %q (%s)", resp.Answer, resp.AnswerError)
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("took %s: the LLM's budget was not kept", time.Since(start))
			}
		})
	}
}

func TestOllamaDown(t *testing.T) {
	f := &fakeOllama{}
	s, srv := setup(t, f)
	srv.Close() // connection refused
	resp := ask(t, s, "who is moving?")
	if resp.PlanSource != "rules" || resp.Answer != "" || !strings.Contains(resp.AnswerError, "unreachable") || len(resp.Results) == 0 {
		t.Errorf("response: %+v", resp)
	}
	if strings.Count(resp.PlanError, "connection refused") != 1 {
		t.Errorf("an unreachable Ollama was asked again: %s", resp.PlanError)
	}
	s.LLM = nil
	if resp := ask(t, s, "who is moving?"); resp.PlanSource != "rules" || !strings.Contains(resp.AnswerError, "no LLM") {
		t.Errorf("without LLM: %+v", resp)
	}
	if resp := ask(t, s, "quantum chromodynamics"); !resp.NoResults || resp.Answer != "" {
		t.Errorf("nothing found: %+v", resp)
	}
	if _, err := s.Query(context.Background(), Request{Question: "  "}); err == nil {
		t.Error("empty question accepted")
	}
}

// While the keyword index loads, a question for a narrower audience than
// every channel cannot be ranked with that audience's word statistics: it
// fails plainly, before the LLM is asked to plan (and a cursor's page
// likewise); over every channel FTS5 ranks it as before.
func TestQuestionWaitsForTheKeywordIndex(t *testing.T) {
	ctx := context.Background()
	f := &fakeOllama{}
	s, _ := setup(t, f)
	kw := &index.Keywords{DB: s.DB} // not loaded
	s.Search.Keywords, s.Search.KeywordWait = kw, 20*time.Millisecond
	for _, req := range []Request{
		{Question: "who is moving?", Filter: sqlite.Filter{Channels: []int64{1}}},
		{Question: "who is moving?", Readable: []int64{1}},
		{Question: "who is moving?", Readable: []int64{1}, Cursor: "anything"},
	} {
		if _, err := s.Query(ctx, req); !errors.Is(err, search.ErrKeywordsLoading) {
			t.Errorf("%+v while the index loads: %v, want ErrKeywordsLoading", req, err)
		}
	}
	if n := len(f.requests); n != 0 {
		t.Errorf("the LLM was asked %d times for questions that could not be searched", n)
	}
	if resp := ask(t, s, "who is moving?"); len(resp.Results) == 0 {
		t.Errorf("every channel while the index loads: %+v, want FTS5's results", resp)
	}
	if err := kw.Load(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Query(ctx, Request{Question: "who is moving?", Readable: []int64{1}})
	if err != nil || len(resp.Results) == 0 {
		t.Errorf("once the index loaded: %+v, %v", resp, err)
	}
}

// The rules plan searches the question as it is: its keywords are only
// the words the synonyms file spells other ways. Its proper nouns,
// quoted phrases and Latin words in Korean are no keywords: required,
// they narrowed the search to the few conversations holding them, ranked
// there unlike the same request in hybrid mode.
// A person the question names is weighed up, not required: what was
// said to them, by someone else, is found too (as the blog's author
// filter it was not), after their own words.
func TestNamedPersonWeighedNotRequired(t *testing.T) {
	s, _ := setup(t, &fakeOllama{})
	s.LLM = nil
	resp := ask(t, s, "what did alex say about the hot water?")
	if !slices.Equal(resp.Authors, []int64{10}) || !slices.ContainsFunc(resp.Results, func(r search.Result) bool { return r.MessageID == 3 }) {
		t.Errorf("authors %v, results %+v: want alex (10) resolved and minsu's message 3 on the hot water found", resp.Authors, resp.Results)
	}
	named := ask(t, s, "what did alex say about the boiler?")
	if len(named.Results) == 0 || named.Results[0].MessageID != 4 {
		t.Errorf("results %+v: want alex's own message on the boiler (4) first", named.Results)
	}
}

func TestRulePlanAndNames(t *testing.T) {
	synonyms := map[string][]string{"claude": {"클로드"}, "boiler": {"보일러"}}
	for q, want := range map[string]string{
		`find "Death Stranding" talk with Claude and the iPhone`:          "claude",
		"What did Melanie paint on Friday, October 13, 2023 with Claude?": "claude",
		"클코로 리포트 고친 얘기 claude, 그리고 boiler 얘기도 claude":                     "claude|boiler",
		"김영하의 작품 중 '아랑은 왜'를 출간한 곳은 어디인가?":                                 "",
		"In-ho: Okay. Can you help Mike? Sure.":                           "",
	} {
		p := planByRules(q, synonyms)
		if strings.Join(p.Keywords, "|") != want || len(p.Subqueries) != 1 || p.Subqueries[0] != q {
			t.Errorf("%q: plan %q %q, want the question and keywords %q", q, p.Subqueries, p.Keywords, want)
		}
	}
	names := map[string][]int64{"민수": {1}, "alex": {2}}
	text, ids := resolveAuthors("민수가 <@3> 한테 말한 거 Alex's 123456789012345678", names)
	if text != "한테 말한 거" || len(ids) != 3 {
		t.Errorf("resolveAuthors = %q, %v", text, ids)
	}
}

// deletingLLM deletes a message while it summarizes: a member deleting
// it during a catch-up's LLM call.
type deletingLLM struct {
	s   *Service
	del int64
}

func (d *deletingLLM) Complete(ctx context.Context, r llm.Request) (string, error) {
	if d.del != 0 {
		if _, err := d.s.DB.Apply(ctx, &searchd.Batch{Deletes: []int64{d.del}}, segment.DefaultRules, nil); err != nil {
			return "", err
		}
		d.del = 0
	}
	return `{"summary":"the boiler broke, someone wants a plumber","keywords":["boiler"]}`, nil
}

// A summary written while a message it read was deleted is shown once, to
// the member who asked then, and not cached: the next catch-up does not
// serve the deleted text's summary.
func TestCatchupDoesNotCacheWhatWasDeletedMeanwhile(t *testing.T) {
	s, _ := setup(t, &fakeOllama{})
	ctx := context.Background()
	s.LLM = &deletingLLM{s: s, del: 3} // "the boiler broke, no hot water"
	req := CatchupRequest{Channel: 1, Since: t0.Add(4 * time.Hour).UnixMicro()}
	if _, err := s.Catchup(ctx, req); err != nil {
		t.Fatal(err)
	}
	again, err := s.Catchup(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Conversations) == 0 {
		t.Fatal("no conversation left to catch up on")
	}
	for _, c := range again.Conversations {
		if c.Cached {
			t.Errorf("the summary of deleted message 3 was cached and served again: %q", c.Summary)
		}
	}
}

func TestCatchup(t *testing.T) {
	f := &fakeOllama{script: []string{
		`json:{"summary":"the boiler broke","keywords":["boiler","plumber"]}`,
		`json:{"summary":"alex is moving","keywords":["apartment"]}`,
	}}
	s, _ := setup(t, f)
	ctx := context.Background()
	resp, err := s.Catchup(ctx, CatchupRequest{Channel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Conversations) != 2 || resp.Conversations[0].Summary != "the boiler broke" ||
		resp.Conversations[1].Summary != "alex is moving" || resp.Conversations[0].Cached {
		t.Fatalf("catchup: %+v", resp)
	}
	if r := f.requests[0]; r.Format != "json" || !strings.Contains(r.Messages[1].Content, "boiler") {
		t.Errorf("summary request: %+v", r)
	}
	// Again: from the cache, without asking the LLM.
	again, err := s.Catchup(ctx, CatchupRequest{Channel: 1})
	if err != nil || !again.Conversations[0].Cached || len(f.requests) != 2 {
		t.Errorf("second call: %+v, %d requests", again, len(f.requests))
	}
	// An edit makes the summary stale.
	edit := searchd.Message{ID: 3, ChannelID: 1, CreatedAt: t0.Add(5 * time.Hour).UnixMicro(), EditedAt: t0.Add(6 * time.Hour).UnixMicro(),
		Content: "the boiler is fixed", Type: "Default", Author: searchd.Author{ID: 11, Username: "minsu"}}
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{edit}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	f.script = []string{"404"}
	third, err := s.Catchup(ctx, CatchupRequest{Channel: 1, Since: t0.Add(4 * time.Hour).UnixMicro()})
	if err != nil || len(third.Conversations) != 1 || third.Conversations[0].Summary != "" || !strings.Contains(third.SummaryError, "not found") {
		t.Errorf("after an edit, LLM missing: %+v, %v", third, err)
	}
	if _, err := s.Catchup(ctx, CatchupRequest{}); err == nil {
		t.Error("catch-up without a channel accepted")
	}
}

func TestCursorPagesWithoutTheLLM(t *testing.T) {
	f := &fakeOllama{script: []string{`json:{"subqueries":["new apartment","boiler broke"],"keywords":[]}`, "text:Both [1]."}}
	s, _ := setup(t, f)
	ctx := context.Background()
	q := "what happened with the apartment and the boiler?"
	first, err := s.Query(ctx, Request{Question: q, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Results) != 1 || first.NextCursor == "" {
		t.Fatalf("first page: %d results, cursor %q", len(first.Results), first.NextCursor)
	}
	second, err := s.Query(ctx, Request{Question: q, Limit: 1, Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Results) != 1 || second.Offset != 1 || second.NextCursor != "" || second.Answer != "" {
		t.Fatalf("second page: %+v", second)
	}
	if second.Results[0].SegmentID == first.Results[0].SegmentID {
		t.Error("the second page repeats the first")
	}
	if len(f.requests) != 2 {
		t.Errorf("%d LLM requests; paging must not ask again", len(f.requests))
	}
	version, _ := s.DB.IndexVersion(ctx)
	forged := search.EncodeCursor(queryCursor{Cursor: search.Cursor{Version: version, Fingerprint: fingerprint(q, sqlite.Filter{}, nil), Offset: 1},
		Plan: Plan{Subqueries: []string{"a", "b", "c", "d", "e"}}})
	refuse := func(name string, r Request, want string) {
		t.Helper()
		_, err := s.Query(ctx, r)
		var ie *search.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want an input error with %q", name, err, want)
		}
	}
	refuse("other question", Request{Question: "something else", Cursor: first.NextCursor}, "different query or filter")
	refuse("other filter", Request{Question: q, Cursor: first.NextCursor, Filter: sqlite.Filter{Channels: []int64{1}}}, "different query or filter")
	// readable weighs keyword scores (the audience's word statistics):
	// another audience's page is another ranking.
	refuse("other audience", Request{Question: q, Cursor: first.NextCursor, Readable: []int64{1, 2}}, "different query or filter")
	refuse("garbage", Request{Question: q, Cursor: "%%%"}, "invalid cursor")
	refuse("forged plan", Request{Question: q, Cursor: forged}, "invalid cursor")
	b := &searchd.Batch{Messages: []searchd.Message{{ID: 9, ChannelID: 1, CreatedAt: t0.Add(9 * time.Hour).UnixMicro(),
		Content: "new", Type: "Default", Author: searchd.Author{ID: 10, Username: "alex"}}}}
	if _, err := s.DB.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	refuse("new data", Request{Question: q, Limit: 1, Cursor: first.NextCursor}, "messages were added, edited or deleted since this cursor was made")
}

// A question's cursor for a member's channels pages on while a channel
// they cannot read changes, and is refused once one of theirs does
// (search.Service.CursorVersion).
func TestQuestionCursorOutlivesChangesElsewhere(t *testing.T) {
	f := &fakeOllama{script: []string{`json:{"subqueries":["new apartment","boiler broke"],"keywords":[]}`, "text:Both [1]."}}
	s, _ := setup(t, f)
	ctx := context.Background()
	q := "what happened with the apartment and the boiler?"
	mine := sqlite.Filter{Channels: []int64{1}}
	first, err := s.Query(ctx, Request{Question: q, Limit: 1, Filter: mine})
	if err != nil || first.NextCursor == "" {
		t.Fatalf("first page: %v, %+v", err, first)
	}
	add := func(id, channel int64) {
		t.Helper()
		b := &searchd.Batch{Messages: []searchd.Message{{ID: id, ChannelID: channel, CreatedAt: t0.Add(9 * time.Hour).UnixMicro(),
			Content: "new", Type: "Default", Author: searchd.Author{ID: 10, Username: "alex"}}}}
		if _, err := s.DB.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
	}
	add(90, 77) // a channel the member cannot read
	if _, err := s.Query(ctx, Request{Question: q, Limit: 1, Filter: mine, Cursor: first.NextCursor}); err != nil {
		t.Errorf("a change in a channel the member cannot read refused their page: %v", err)
	}
	add(91, 1)
	if _, err := s.Query(ctx, Request{Question: q, Limit: 1, Filter: mine, Cursor: first.NextCursor}); err == nil ||
		!strings.Contains(err.Error(), "messages were added, edited or deleted since this cursor was made") {
		t.Errorf("a change in the member's channel: %v; want the cursor refused", err)
	}
}

type noEmbedder struct{}

func (noEmbedder) Dim() int                                                     { return 1 }
func (noEmbedder) EmbedQuery(context.Context, string) ([]float32, error)        { return nil, nil }
func (noEmbedder) EmbedPassages(context.Context, []string) ([][]float32, error) { return nil, nil }

// sameEmbedder gives every text one vector: by meaning, nothing tells
// the conversations apart.
type sameEmbedder struct{}

func (sameEmbedder) Name() string { return "same" }
func (sameEmbedder) Dim() int     { return 2 }
func (sameEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return []float32{0.6, 0.8}, nil
}
func (e sameEmbedder) EmbedPassages(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{0.6, 0.8}
	}
	return out, nil
}

// A question is searched in hybrid mode, with its words as well as its
// meaning: where the meaning tells nothing apart, the messages holding
// the question's words come first, as in a hybrid search (the pipeline,
// the default mode, ranks by meaning alone and puts the first
// conversation first). Without a model, lexical.
func TestQuestionSearchedByWordsAndMeaning(t *testing.T) {
	ctx := context.Background()
	s, _ := setup(t, &fakeOllama{})
	if m := s.mode(); m != search.Lexical {
		t.Errorf("no model: %s", m)
	}
	s.LLM = nil
	if err := (&index.Job{DB: s.DB, Embedder: sameEmbedder{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	matrix, err := index.LoadMatrix(ctx, s.DB, 2)
	if err != nil {
		t.Fatal(err)
	}
	s.Search.Embedder, s.Search.Matrix = sameEmbedder{}, matrix
	// A question with no name or date in it is the same request as a
	// hybrid search of it, ranked the same: a capitalized word or a quoted
	// phrase narrows nothing (as a keyword it had searched only the
	// conversations holding it).
	askBoth := func(q string) *Response {
		t.Helper()
		hybrid, err := s.Search.Search(ctx, search.Request{Query: q, Mode: search.Hybrid, RankedMessages: true})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := s.Query(ctx, Request{Question: q, RankedMessages: true})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(resp.RankedMessages, hybrid.RankedMessages) || len(resp.Plan.Keywords) > 0 {
			t.Errorf("%q: question ranked %v (keywords %q), hybrid %v: want hybrid's", q, resp.RankedMessages, resp.Plan.Keywords, hybrid.RankedMessages)
		}
		return resp
	}
	resp := askBoth("the boiler and the plumber")
	if len(resp.RankedMessages) == 0 || resp.RankedMessages[0] != 4 {
		t.Errorf("question ranked messages %v: want the plumber's (4) first", resp.RankedMessages)
	}
	if len(resp.Results) == 0 || resp.Results[0].MessageID != 4 {
		t.Errorf("first result %+v, want the plumber's conversation", resp.Results)
	}
	askBoth("What did they say about the boiler and the Plumber?")
	askBoth(`who said "hot water" about an apartment`)
}

// Well-formed plans that are not about the question, as small real
// models write them, are cut down or refused.
func TestGroundIn(t *testing.T) {
	for _, c := range []struct {
		name, q      string
		plan         Plan
		subs, kws    string
		wantRefusals bool
	}{
		{"a good plan", "find the talk about how hard job hunting was",
			Plan{Subqueries: []string{"job hunt struggles", "job search stress"}, Keywords: []string{}}, "job hunt struggles|job search stress", "", false},
		{"the prompt's example copied", "what did he say about the boiler?",
			Plan{Subqueries: []string{"economics report edits", "report content changes"}, Keywords: []string{"claude"}}, "", "", true},
		{"one stray subquery, an invented keyword", "when is the Steam sale?",
			Plan{Subqueries: []string{"steam sale dates", "weather today"}, Keywords: []string{"Steam", "Epic"}}, "steam sale dates", "Steam", false},
		{"only stop words shared", "what did they say about that?",
			Plan{Subqueries: []string{"what they said"}}, "", "", true},
		{"Korean by syllable pairs", "민수가 이사 간다고 한 게 언제였지?",
			Plan{Subqueries: []string{"이사 날짜", "새 집"}}, "이사 날짜", "", false},
		{"a prefix of four", "who went hiking?",
			Plan{Subqueries: []string{"hike trip"}}, "", "", true},
		{"one word of three kept", "when did she go to the LGBTQ support group?",
			Plan{Subqueries: []string{"support meetings"}}, "", "", true},
		{"two of three kept", "when did she go to the LGBTQ support group?",
			Plan{Subqueries: []string{"support group meetings"}}, "support group meetings", "", false},
		{"a shared stem", "who went hiking?",
			Plan{Subqueries: []string{"hiking trail"}}, "hiking trail", "", false},
		{"repeats dropped", "which dance competitions did she enter?",
			Plan{Subqueries: []string{"dance competitions", "Dance  competitions", "dance contests"}, Keywords: []string{"dance", "Dance"}},
			"dance competitions|dance contests", "dance", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.plan
			err := p.groundIn(c.q, 0.5)
			if (err != nil) != c.wantRefusals {
				t.Fatalf("groundIn: %v", err)
			}
			if err == nil && (strings.Join(p.Subqueries, "|") != c.subs || strings.Join(p.Keywords, "|") != c.kws) {
				t.Errorf("kept %q %q, want %q %q", p.Subqueries, p.Keywords, c.subs, c.kws)
			}
		})
	}
	if err := (&Plan{Subqueries: []string{"the boiler"}}).validate(map[string]bool{}); err != nil {
		t.Fatal(err)
	}
	if err := (&Plan{Subqueries: []string{"minsu's boiler secret"}}).validate(map[string]bool{"minsu's": true}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("a name in the plan: %v (the error must not quote the plan)", err)
	}
}

// KeepQuestion searches the question (its names taken out) beside the
// model's subqueries; the rules plan is left as it is.
func TestKeepQuestion(t *testing.T) {
	f := &fakeOllama{script: []string{`json:{"subqueries":["boiler broke"],"keywords":[]}`, "text:It broke [1]."}}
	s, _ := setup(t, f)
	s.Config.KeepQuestion = true
	resp := ask(t, s, "what did alex say about the boiler?")
	if resp.PlanSource != "llm" || strings.Join(resp.Plan.Subqueries, "|") != "boiler broke|what did say about the boiler?" {
		t.Errorf("plan %s %q", resp.PlanSource, resp.Plan.Subqueries)
	}
	f.script = []string{"text:not json", "text:still not"}
	if resp := ask(t, s, "what did alex say about the boiler?"); resp.PlanSource != "rules" || len(resp.Plan.Subqueries) != 1 {
		t.Errorf("rules plan %q", resp.Plan.Subqueries)
	}
}

// Names and aliases are recognized only for authors seen in the channels
// the asker may read: otherwise a question would tell who posts where the
// asker cannot read, and show them as "by <@id>".
func TestNamesOnlyFromReadableChannels(t *testing.T) {
	s, _ := setup(t, &fakeOllama{})
	s.LLM = nil
	ctx := context.Background()
	const sora, staffOnly, thread = 12, 2, 3
	if _, err := s.DB.Apply(ctx, &searchd.Batch{
		Channels: []searchd.Channel{{ID: 1, GuildID: 9}, {ID: staffOnly, GuildID: 9}, {ID: thread, GuildID: 9, ParentID: 1, Kind: "GuildPublicThread"}},
		Messages: []searchd.Message{
			{ID: 20, ChannelID: staffOnly, CreatedAt: t0.Add(time.Hour).UnixMicro(), Content: "the boiler budget is approved", Type: "Default",
				Author: searchd.Author{ID: sora, Username: "sora"}},
		}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	s.Aliases = map[string][]int64{"soso": {sora}, "al": {10}}
	for _, tc := range []struct {
		q        string
		channels []int64
		want     []int64
	}{
		{"what did sora say about the boiler", []int64{staffOnly}, []int64{sora}},
		{"what did sora say about the boiler", nil, []int64{sora}}, // the operator's own CLI
		{"what did sora say about the boiler", []int64{1}, nil},
		{"what did soso say about the boiler", []int64{1}, nil},
		{"what did soso say about the boiler", []int64{staffOnly}, []int64{sora}},
		{"what did al say about the boiler", []int64{1}, []int64{10}},
	} {
		resp, err := s.Query(ctx, Request{Question: tc.q, Filter: sqlite.Filter{Channels: tc.channels}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(resp.Authors, tc.want) {
			t.Errorf("%q in channels %v: authors %v, want %v", tc.q, tc.channels, resp.Authors, tc.want)
		}
	}
	// Seen in a public thread of a readable channel counts.
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{{ID: 21, ChannelID: thread,
		CreatedAt: t0.Add(2 * time.Hour).UnixMicro(), Content: "hello", Type: "Default", Author: searchd.Author{ID: sora, Username: "sora"}}}},
		segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if resp, err := s.Query(ctx, Request{Question: "what did sora say", Filter: sqlite.Filter{Channels: []int64{1}}}); err != nil || !slices.Equal(resp.Authors, []int64{sora}) {
		t.Errorf("sora seen in a public thread of a readable channel: %v, %v", resp.Authors, err)
	}
}

// What the LLM is sent, for the plan and the summary, holds only what the
// asker may read: nothing of a channel outside the filter, however well it
// matches the question.
func TestLLMSeesOnlyTheAskersChannels(t *testing.T) {
	f := &fakeOllama{}
	s, _ := setup(t, f)
	ctx := context.Background()
	const staffOnly = 2
	var staff []searchd.Message
	for i := range 6 {
		staff = append(staff, searchd.Message{ID: int64(30 + i), ChannelID: staffOnly, CreatedAt: t0.Add(time.Duration(i+1) * 24 * time.Hour).UnixMicro(),
			Content: "STAFFSECRET the boiler budget, no hot water money", Type: "Default", Author: searchd.Author{ID: 12, Username: "sora"}})
	}
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: staff}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	f.script = []string{`json:{"subqueries":["boiler budget"],"keywords":["boiler"]}`, "text:The boiler broke [1]."}
	if _, err := s.Query(ctx, Request{Question: "what about the boiler budget money?", Filter: sqlite.Filter{Channels: []int64{1}}}); err != nil {
		t.Fatal(err)
	}
	if len(f.requests) < 2 {
		t.Fatalf("%d LLM requests; the test cannot tell", len(f.requests))
	}
	for _, r := range f.requests {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "STAFFSECRET") {
				t.Errorf("the LLM was sent a channel outside the filter: %q", m.Content)
			}
		}
	}
	// The same question over both channels does send it: the test can tell.
	f.requests = nil
	f.script = []string{`json:{"subqueries":["boiler budget"],"keywords":["boiler"]}`, "text:The budget [1]."}
	if _, err := s.Query(ctx, Request{Question: "what about the boiler budget?", Filter: sqlite.Filter{Channels: []int64{1, staffOnly}}}); err != nil {
		t.Fatal(err)
	}
	sent := false
	for _, r := range f.requests {
		for _, m := range r.Messages {
			sent = sent || strings.Contains(m.Content, "STAFFSECRET")
		}
	}
	if !sent {
		t.Error("with both channels the LLM never saw the staff channel: the check above cannot fail")
	}
}

// A summary naming a member of the channels searched whom the results it
// was given do not name is refused (namesUnshown), through the pipeline:
// the results' authors, by the names the index knows, pass.
func TestSummaryNamingSomeoneNotShownIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ summary, refused string }{
		{"Minsu said the boiler broke [1].", ""},
		{"Sora fixed the boiler [1].", "names someone the results do not"},
	} {
		f := &fakeOllama{script: []string{`json:{"subqueries":["boiler broke"],"keywords":[]}`, "text:" + c.summary}}
		s, _ := setup(t, f)
		if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{{ID: 9, ChannelID: 1, CreatedAt: t0.Add(30 * 24 * time.Hour).UnixMicro(),
			Content: "pizza on friday?", Type: "Default", Author: searchd.Author{ID: 12, Username: "sora"}}}}, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
		resp := ask(t, s, "what did alex say about the boiler?")
		if c.refused == "" && resp.Answer != c.summary {
			t.Errorf("%q: answer %q (%s), want it taken", c.summary, resp.Answer, resp.AnswerError)
		}
		if c.refused != "" && (resp.Answer != "" || !strings.Contains(resp.AnswerError, c.refused)) {
			t.Errorf("%q: answer %q (%s), want it refused", c.summary, resp.Answer, resp.AnswerError)
		}
	}
}

// A plan by rules (no LLM, or its plan refused) is the question itself as
// its one subquery, which may be the 1,000 bytes a question takes: its
// cursor is checked as a question, not as a model's phrase (100
// characters), or More refused every longer question's second page as an
// invalid cursor.
func TestLongQuestionPagesWithTheRulesPlan(t *testing.T) {
	s, _ := setup(t, &fakeOllama{})
	s.LLM = nil
	ctx := context.Background()
	q := strings.TrimSpace(strings.Repeat("what happened with the apartment and the boiler? ", 6))
	first, err := s.Query(ctx, Request{Question: q, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if first.PlanSource != "rules" || len(first.Results) != 1 || first.NextCursor == "" {
		t.Fatalf("first page: plan %s, %d results, cursor %q", first.PlanSource, len(first.Results), first.NextCursor)
	}
	second, err := s.Query(ctx, Request{Question: q, Limit: 1, Cursor: first.NextCursor})
	if err != nil || len(second.Results) != 1 || second.Results[0].SegmentID == first.Results[0].SegmentID {
		t.Fatalf("second page of a %d-character question: %+v, %v", len(q), second, err)
	}
	version, _ := s.DB.IndexVersion(ctx)
	forged := search.EncodeCursor(queryCursor{Cursor: search.Cursor{Version: version, Fingerprint: fingerprint(q, sqlite.Filter{}, nil), Offset: 1},
		Plan: Plan{Subqueries: []string{strings.Repeat("x", 1001)}}, Source: "rules"})
	if _, err := s.Query(ctx, Request{Question: q, Cursor: forged}); err == nil || !strings.Contains(err.Error(), "invalid cursor") {
		t.Errorf("a forged rules cursor over a question's length: %v", err)
	}
}

// A catch-up line naming a member of the channel whom the conversation's
// text does not name is refused and not cached: the model is given the
// messages without their authors, so the name is its guess.
func TestCatchupLineNamingSomeoneNotInTheMessagesIsRefused(t *testing.T) {
	f := &fakeOllama{script: []string{
		`json:{"summary":"Sora fixed the boiler","keywords":["boiler"]}`,
		`json:{"summary":"someone is moving to a new apartment","keywords":["apartment"]}`,
	}}
	s, _ := setup(t, f)
	ctx := context.Background()
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{{ID: 9, ChannelID: 1, CreatedAt: t0.Add(30 * 24 * time.Hour).UnixMicro(),
		Content: "pizza on friday?", Type: "Default", Author: searchd.Author{ID: 12, Username: "sora"}}}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	resp, err := s.Catchup(ctx, CatchupRequest{Channel: 1, Until: t0.Add(24 * time.Hour).UnixMicro()})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Conversations) != 2 || resp.Conversations[0].Summary != "" || resp.Conversations[1].Summary == "" ||
		!strings.Contains(resp.SummaryError, "names someone") {
		t.Fatalf("catchup: %+v", resp)
	}
}
