package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"dsearch/searchd/answer"
	"dsearch/searchd/index"
	"dsearch/searchd/ingest"
	"dsearch/searchd/internal/sample"
	"dsearch/searchd/search"
	"dsearch/searchd/segment"
	"dsearch/searchd/server"
	"dsearch/searchd/socket"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
	"dsearch/shared/client"
)

// TestMain doubles as a client process for the peer-UID test: run with
// DSEARCH_PEER_CLIENT set, the test binary calls /v1/healthz on that
// socket, once plainly (the server's check) and once through the shared
// client (the client's own checks), and prints the outcomes.
func TestMain(m *testing.M) {
	if path := os.Getenv("DSEARCH_PEER_CLIENT"); path != "" {
		hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}}}
		status := "error"
		if resp, err := hc.Get("http://searchd.sock/v1/healthz"); err == nil {
			status = resp.Status
			resp.Body.Close()
		}
		_, err := client.New(path).Health(context.Background())
		fmt.Printf("uid %d: server says %s; client: %v\n", os.Getuid(), status, err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type fixture struct {
	db     *sqlite.DB
	socket string
	c      *client.Client
	http   *http.Client
}

// serve runs a real server on a real socket over a database holding the
// sample export.
func serve(t *testing.T, ln net.Listener, path string, opts ...func(*server.Server)) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	paths, err := sample.WriteSample(filepath.Join(t.TempDir(), "sample"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range (&ingest.Importer{DB: db, Rules: segment.DefaultRules}).Import(ctx, paths) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	srv := &server.Server{DB: db, Rules: segment.DefaultRules, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Version: "test",
		Search: &search.Service{DB: db, Config: search.DefaultConfig()}}
	for _, o := range opts {
		o(srv)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		db.Close()
	})
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	return &fixture{db: db, socket: path, c: client.New(path), http: hc}
}

func newFixture(t *testing.T, opts ...func(*server.Server)) *fixture {
	t.Helper()
	dir, err := os.MkdirTemp("", "ds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "run", "searchd.sock")
	ln, err := socket.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, ln, path, opts...)
}

// raw sends a request as-is and returns the status and error message.
func (f *fixture) raw(t *testing.T, method, path, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://searchd.sock"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: content type %q", method, path, ct)
	}
	return resp.StatusCode, string(b)
}

func TestReadRoutes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h, err := f.c.Health(ctx)
	if err != nil || !h.OK || h.SchemaVersion < 1 {
		t.Fatalf("health: %+v, %v", h, err)
	}
	st, err := f.c.Stats(ctx)
	if err != nil || st.Messages != 42 || st.Segments == 0 || len(st.GapQuantiles) != 5 || st.OverlappingSegs != 1 {
		t.Fatalf("stats: %+v, %v", st, err)
	}
	seg, err := f.c.Segment(ctx, 1)
	if err != nil || len(seg.Messages) != seg.MessageCount || seg.MessageCount == 0 {
		t.Fatalf("segment: %+v, %v", seg, err)
	}
	for i := 1; i < len(seg.Messages); i++ {
		if seg.Messages[i].CreatedAt.Before(seg.Messages[i-1].CreatedAt) {
			t.Error("segment messages out of order")
		}
	}
	mid := seg.Messages[2]
	mc, err := f.c.Message(ctx, mid.ID, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if mc.Message.ID != mid.ID || len(mc.Before) != 2 || len(mc.After) != 1 ||
		mc.Before[1].ID != seg.Messages[1].ID || mc.After[0].ID != seg.Messages[3].ID {
		t.Errorf("message context: %+v", mc)
	}
	want := fmt.Sprintf("https://discord.com/channels/%s/%s/%s", sample.GuildID, mid.ChannelID, mid.ID)
	if mc.Message.URL != want || mc.Message.AuthorName == "" {
		t.Errorf("url %q author %q", mc.Message.URL, mc.Message.AuthorName)
	}
}

func TestMetrics(t *testing.T) {
	f := newFixture(t)
	f.c.Health(context.Background())
	f.raw(t, "GET", "/v1/messages/abc", "")
	req, _ := http.NewRequest("GET", "http://searchd.sock/v1/metrics", nil)
	resp, err := f.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`dsearch_http_requests_total{code="200",route="GET /v1/healthz"} 1`,
		`dsearch_http_requests_total{code="400",route="GET /v1/messages/{id}"} 1`,
		`dsearch_http_request_duration_seconds_bucket{route="GET /v1/healthz"`,
		`dsearch_messages 42`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(string(b), "abc") {
		t.Error("metrics carry a request's URL")
	}
}

func TestSearchRoute(t *testing.T) {
	f := newFixture(t)
	v := url.Values{"q": {"보일러"}, "mode": {"lexical"}, "since": {"2025-01-01"}, "until": {"2025-12-31T00:00:00Z"}}
	resp, err := f.c.Search(context.Background(), v)
	if err != nil || len(resp.Results) != 1 || !strings.Contains(resp.Results[0].Previews[0].Content, "보일러") ||
		!strings.HasPrefix(resp.Results[0].URL, "https://discord.com/channels/") {
		t.Fatalf("search: %+v, %v", resp, err)
	}
	// Without a model the default mode is lexical.
	if resp, err = f.c.Search(context.Background(), url.Values{"q": {"보일러"}}); err != nil || resp.Mode != "lexical" || len(resp.Results) == 0 {
		t.Fatalf("default mode without a model: %+v, %v", resp, err)
	}
}

// While the keyword index loads, a search or question for fewer channels
// than all is refused with 503 and says why (the bot shows it as "not
// ready"), rather than ranked by every channel's word statistics; over
// every channel FTS5 answers.
func TestKeywordIndexLoadingIs503(t *testing.T) {
	f := newFixture(t, func(srv *server.Server) {
		srv.Search.Keywords, srv.Search.KeywordWait = &index.Keywords{DB: srv.DB}, 10*time.Millisecond // never loaded
		srv.Answer = &answer.Service{DB: srv.DB, Search: srv.Search, Config: answer.DefaultConfig()}
	})
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/search?q=%EB%B3%B4%EC%9D%BC%EB%9F%AC&mode=lexical&channel=123", ""},
		{"GET", "/v1/search?q=%EB%B3%B4%EC%9D%BC%EB%9F%AC&mode=lexical&readable=123", ""},
		{"POST", "/v1/query", `{"question":"보일러","channels":["123"]}`},
		{"POST", "/v1/query", `{"question":"보일러","readable":["123"]}`},
	} {
		code, body := f.raw(t, c.method, c.path, c.body, "Content-Type", "application/json")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "keyword index is loading") {
			t.Errorf("%s %s %s: %d %s, want 503 saying the keyword index is loading", c.method, c.path, c.body, code, body)
		}
	}
	if code, body := f.raw(t, "GET", "/v1/search?q=%EB%B3%B4%EC%9D%BC%EB%9F%AC&mode=lexical", ""); code != http.StatusOK || !strings.Contains(body, "보일러") {
		t.Errorf("every channel while the index loads: %d %s, want FTS5's results", code, body)
	}
}

// A relative bound ("since 300w") pages: it is whole days, so the next
// page is the same query (to the microsecond it was not, and every
// cursor was refused as another query's).
func TestRelativeSincePages(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	v := url.Values{"q": {"the"}, "mode": {"lexical"}, "since": {"300w"}, "limit": {"1"}}
	first, err := f.c.Search(ctx, v)
	if err != nil || first.NextCursor == "" {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	time.Sleep(5 * time.Millisecond)
	v.Set("cursor", first.NextCursor)
	if next, err := f.c.Search(ctx, v); err != nil || len(next.Results) != 1 {
		t.Fatalf("next page with since=300w: %+v, %v", next, err)
	}
}

func TestPostMessages(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	at := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	batch := &api.MessageBatch{
		Channels: []api.Channel{{ID: 77, GuildID: 1, Name: "new-channel"}},
		Messages: []api.MessageUpsert{
			{ID: 7001, ChannelID: 77, GuildID: 1, Author: api.Author{ID: 5, Username: "bot-seen"}, CreatedAt: at, Content: "first <@5>"},
			{ID: 7002, ChannelID: 77, Author: api.Author{ID: 5, Username: "bot-seen"}, CreatedAt: at.Add(time.Minute), Content: "second", ReplyToID: 7001},
		},
	}
	r, err := f.c.PostMessages(ctx, batch)
	if err != nil || r.Inserted != 2 {
		t.Fatalf("post: %+v, %v", r, err)
	}
	if r, err = f.c.PostMessages(ctx, batch); err != nil || r.Unchanged != 2 || r.Inserted != 0 {
		t.Fatalf("post again: %+v, %v", r, err)
	}
	edited := at.Add(time.Hour)
	batch.Messages[1].Content, batch.Messages[1].EditedAt = "second, edited", &edited
	if r, err = f.c.PostMessages(ctx, batch); err != nil || r.Updated != 1 {
		t.Fatalf("edit: %+v, %v", r, err)
	}
	mc, err := f.c.Message(ctx, 7002, 1, 0)
	if err != nil || mc.Message.Content != "second, edited" || mc.Message.EditedAt == nil ||
		mc.Message.SegmentID != mc.Before[0].SegmentID {
		t.Fatalf("after edit: %+v, %v", mc, err)
	}
	if r, err = f.c.PostMessages(ctx, &api.MessageBatch{Deletes: []api.ID{7002}}); err != nil || r.Deleted != 1 {
		t.Fatalf("delete: %+v, %v", r, err)
	}
	_, err = f.c.Message(ctx, 7002, 0, 0)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
		t.Errorf("deleted message: %v", err)
	}
}

func TestBackfillCheckpoint(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	at := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	if _, err := f.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{
		{ID: 9002, ChannelID: 88, Author: api.Author{ID: 5, Username: "u"}, CreatedAt: at.Add(time.Minute), Content: "b"},
		{ID: 9001, ChannelID: 88, Author: api.Author{ID: 5, Username: "u"}, CreatedAt: at, Content: "a"},
	}}); err != nil {
		t.Fatal(err)
	}
	b, err := f.c.Backfill(ctx, 88)
	if err != nil || b.Before != 0 || b.Complete || b.Newest != 9002 {
		t.Fatalf("fresh checkpoint: %+v, %v", b, err)
	}
	if err := f.c.SetBackfill(ctx, &api.Backfill{Channel: 88, Before: 9001, Complete: true}); err != nil {
		t.Fatal(err)
	}
	if b, err = f.c.Backfill(ctx, 88); err != nil || b.Before != 9001 || !b.Complete || b.Newest != 9002 {
		t.Fatalf("stored checkpoint: %+v, %v", b, err)
	}
	if b, err = f.c.Backfill(ctx, 89); err != nil || b.Before != 0 || b.Newest != 0 {
		t.Fatalf("unknown channel: %+v, %v", b, err)
	}
	// The newest at or before a message: what the bot's catch-up starts
	// from when messages newer than its mark are stored (a restore).
	for through, want := range map[api.ID]api.ID{9001: 9001, 9002: 9002, 9999: 9002, 9000: 0} {
		if b, err = f.c.BackfillThrough(ctx, 88, through); err != nil || b.Newest != want || b.Through != through {
			t.Errorf("newest through %d: %+v, %v; want %d", through, b, err, want)
		}
	}
}

func TestBadRequests(t *testing.T) {
	f := newFixture(t, func(srv *server.Server) {
		srv.Answer = &answer.Service{DB: srv.DB, Search: srv.Search, Config: answer.DefaultConfig()}
	})
	okMsg := `{"id":"1","channel_id":"2","author":{"id":"3","username":"u"},"created_at":"2025-01-01T00:00:00Z","content":"x"}`
	many := strings.Repeat(`"1",`, api.MaxBatchItems) + `"2"`
	tests := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		msg                      string
	}{
		{"invalid JSON", "POST", "/v1/messages", `{"messages":[`, nil, 400, "invalid JSON"},
		{"unknown field", "POST", "/v1/messages", `{"mesages":[]}`, nil, 400, "unknown field"},
		{"empty body", "POST", "/v1/messages", ``, nil, 400, "empty request body"},
		{"trailing data", "POST", "/v1/messages", `{"deletes":["1"]} {}`, nil, 400, "trailing data"},
		{"empty batch", "POST", "/v1/messages", `{}`, nil, 400, "empty batch"},
		{"too many items", "POST", "/v1/messages", `{"deletes":[` + many + `]}`, nil, 400, "at most"},
		{"bad id", "POST", "/v1/messages", `{"deletes":["abc"]}`, nil, 400, "invalid id"},
		{"missing author", "POST", "/v1/messages", `{"messages":[` + strings.Replace(okMsg, `"id":"3"`, `"id":"0"`, 1) + `]}`, nil, 400, "author.id is required"},
		{"missing time", "POST", "/v1/messages", `{"messages":[` + strings.Replace(okMsg, `"created_at":"2025-01-01T00:00:00Z",`, ``, 1) + `]}`, nil, 400, "created_at is required"},
		{"duplicate id", "POST", "/v1/messages", `{"messages":[` + okMsg + `,` + okMsg + `]}`, nil, 400, "appears twice"},
		{"body too large", "POST", "/v1/messages", `{"deletes":["` + strings.Repeat("1", 9<<20) + `"]}`, nil, 413, "request body over"},
		{"bad path id", "GET", "/v1/messages/abc", ``, nil, 400, "invalid id"},
		{"neighbours out of range", "GET", "/v1/messages/1?before=500", ``, nil, 400, "before must be"},
		{"negative neighbours", "GET", "/v1/messages/1?after=-1", ``, nil, 400, "after must be"},
		{"unknown message", "GET", "/v1/messages/1", ``, nil, 404, "not found"},
		{"unknown segment", "GET", "/v1/segments/99999", ``, nil, 404, "not found"},
		{"unknown route", "GET", "/v2/everything", ``, nil, 404, "no route"},
		{"wrong method", "DELETE", "/v1/stats", ``, nil, 405, "not allowed"},
		{"browser origin", "GET", "/v1/stats", ``, []string{"Origin", "http://evil.example"}, 403, "browser requests"},
		{"browser referer", "GET", "/v1/stats", ``, []string{"Referer", "http://evil.example/"}, 403, "browser requests"},
		{"search: unknown parameter", "GET", "/v1/search?q=x&colour=red", ``, nil, 400, "unknown parameter"},
		// url.Values drops what it cannot parse: the channel filter with it.
		{"search: malformed query string", "GET", "/v1/search?q=x&mode=lexical&channel=900000000000000020%zz", ``, nil, 400, "malformed query string"},
		{"search: malformed cursor", "GET", "/v1/search?q=x&cursor=%%%", ``, nil, 400, "malformed query string"},
		{"search: not UTF-8", "GET", "/v1/search?q=%ff%fe&mode=lexical", ``, nil, 400, "not UTF-8"},
		{"search: keywords not UTF-8", "GET", "/v1/search?q=x&keywords=%c3&mode=lexical", ``, nil, 400, "not UTF-8"},
		{"catch-up: negative limit", "POST", "/v1/catchup", `{"channel":"1","limit":-5}`, nil, 400, "limit must be"},
		{"catch-up: huge limit", "POST", "/v1/catchup", `{"channel":"1","limit":1000000000}`, nil, 400, "limit must be"},
		{"search: bad since", "GET", "/v1/search?q=x&since=banana", ``, nil, 400, "since"},
		{"search: bad author", "GET", "/v1/search?q=x&author=bob", ``, nil, 400, "author"},
		{"search: bad readable", "GET", "/v1/search?q=x&readable=general", ``, nil, 400, "readable"},
		{"search: bad limit", "GET", "/v1/search?q=x&limit=500", ``, nil, 400, "limit"},
		{"search: bad mode", "GET", "/v1/search?q=x&mode=fuzzy", ``, nil, 400, "mode"},
		{"search: bad cursor", "GET", "/v1/search?q=x&mode=lexical&cursor=zzz", ``, nil, 400, "invalid cursor"},
		{"search: no query", "GET", "/v1/search", ``, nil, 400, "q (or keywords) is required"},
		{"backfill: bad channel", "GET", "/v1/backfill/general", ``, nil, 400, "invalid id"},
		{"backfill: other channel", "PUT", "/v1/backfill/5", `{"channel":"6","before":"1"}`, nil, 400, "differs"},
		{"backfill: negative", "PUT", "/v1/backfill/5", `{"before":"-1"}`, nil, 400, "negative"},
		{"search: no model", "GET", "/v1/search?q=boiler&mode=semantic", ``, nil, 503, "no embedding model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.raw(t, tt.method, tt.path, tt.body, tt.header...)
			if status != tt.status || !strings.Contains(body, tt.msg) || !strings.HasPrefix(body, `{"error":`) {
				t.Errorf("%d %s; want %d with %q", status, strings.TrimSpace(body), tt.status, tt.msg)
			}
			// A batch refused for what it holds says so; the bot sets it
			// aside. An unknown field (a newer bot) is worth retrying.
			if tt.method == "POST" && tt.path == "/v1/messages" {
				if bad := strings.Contains(body, `"code":"bad_batch"`); bad != (tt.name != "unknown field") {
					t.Errorf("%s: code bad_batch %v", strings.TrimSpace(body), bad)
				}
			} else if strings.Contains(body, `"code"`) {
				t.Errorf("%s: a code on a request that is not a batch", strings.TrimSpace(body))
			}
		})
	}
	// Nothing above changed the data.
	st, err := f.c.Stats(context.Background())
	if err != nil || st.Messages != 42 {
		t.Errorf("after bad requests: %+v, %v", st, err)
	}
}

// A peer running as another user is refused even when it can reach the
// socket. The socket here sits in a world-accessible directory on purpose,
// to test the peer check on its own; in production the 0700 directory
// stops such a peer first.
func TestPeerOfAnotherUIDRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a client as nobody")
	}
	dir, err := os.MkdirTemp("", "ds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "open.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o666)
	serve(t, ln, path)

	// A copy of this test binary that nobody may run.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "client")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(uid uint32) string {
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = []string{"DSEARCH_PEER_CLIENT=" + path}
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("client as uid %d: %v\n%s", uid, err, out)
		}
		return string(out)
	}
	// The server refuses nobody; nobody's client refuses a daemon in a
	// directory nobody does not own, which our client, too, finds open.
	if out := run(65534); !strings.Contains(out, "server says 403 Forbidden") ||
		!strings.Contains(out, "refusing to talk to searchd") || !strings.Contains(out, "owned by uid 0, not by us (uid 65534)") {
		t.Errorf("as nobody: %q", out)
	}
	if out := run(0); !strings.Contains(out, "server says 200 OK") || !strings.Contains(out, "must not be group or world accessible") {
		t.Errorf("as ourselves: %q", out)
	}
}

// Message text is private: nothing a user wrote or asked reaches the log
// at info level, even when requests fail.
func TestNoMessageTextInLogs(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	svc := &search.Service{DB: db, Config: search.DefaultConfig()}
	srv := &server.Server{DB: db, Rules: segment.DefaultRules, Log: log, Search: svc,
		Answer: &answer.Service{DB: db, Search: svc, Config: answer.DefaultConfig()}}
	h := srv.Handler()
	do := func(method, path, body string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	do("POST", "/v1/messages", `{"messages":[{"id":"1","channel_id":"2","author":{"id":"3","username":"u"},"created_at":"2025-01-01T00:00:00Z","content":"SECRETWORD in a message"}]}`)
	do("POST", "/v1/messages", `{"messages":[{"id":"1","content":"SECRETWORD bad"}]}`)
	do("GET", "/v1/search?q=SECRETQUERY&mode=lexical", "")
	do("GET", "/v1/search?q=SECRETQUERY", "") // fails: no model
	do("POST", "/v1/query", `{"question":"SECRETQUESTION about it"}`)
	if logs.Len() == 0 {
		t.Fatal("nothing was logged: the test cannot tell")
	}
	for _, secret := range []string{"SECRETWORD", "SECRETQUERY", "SECRETQUESTION"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds %s:\n%s", secret, logs.String())
		}
	}
}

// Bounds are inclusive: a date alone as until takes in that whole day,
// so since=D&until=D finds D's messages, in search and in catch-up; and
// catch-up, like search, refuses since after until.
func TestDateBoundsInclusive(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	day := "2025-01-13" // the sample's boiler conversation (07:30 KST on the 14th)
	resp, err := f.c.Search(ctx, url.Values{"q": {"보일러"}, "mode": {"lexical"}, "since": {day}, "until": {day}})
	if err != nil || len(resp.Results) == 0 {
		t.Errorf("search since=until=%s: %+v, %v", day, resp, err)
	}
	svc := &search.Service{DB: f.db, Config: search.DefaultConfig()}
	srv := &server.Server{DB: f.db, Rules: segment.DefaultRules, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Search: svc,
		Answer: &answer.Service{DB: f.db, Search: svc, Config: answer.DefaultConfig()}}
	catchup := func(since, until string) (int, api.CatchupResponse, string) {
		body := fmt.Sprintf(`{"channel":%q,"since":%q,"until":%q}`, sample.GeneralID, since, until)
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest("POST", "/v1/catchup", strings.NewReader(body)))
		var out api.CatchupResponse
		json.Unmarshal(rec.Body.Bytes(), &out)
		return rec.Code, out, rec.Body.String()
	}
	if code, out, body := catchup(day, day); code != 200 || len(out.Conversations) == 0 {
		t.Errorf("catch-up since=until=%s: %d %s", day, code, body)
	}
	if code, _, body := catchup("2025-02-01", "2025-01-01"); code != 400 || !strings.Contains(body, "since is after until") {
		t.Errorf("catch-up since after until: %d %s", code, body)
	}
}

// Errors net/http answers before any handler runs are JSON too: a URL
// over the header limit (431), a malformed request (400).
func TestServerErrorsAreJSON(t *testing.T) {
	f := newFixture(t)
	resp, err := f.http.Get("http://searchd.sock/v1/search?q=" + strings.Repeat("a", 2<<20))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get("Content-Type") != "application/json" ||
		!strings.Contains(string(b), `"error":"request line and headers over`) {
		t.Errorf("2 MB URL: %d %q %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	// A malformed Host header, sent by hand (Go's client would not).
	c, err := net.Dial("unix", f.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET /v1/healthz HTTP/1.1\r\nHost: a b\r\n\r\n")
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	var e api.Error
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &e) != nil || e.Message == "" {
		t.Errorf("malformed request: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	// The connection still works for everything else.
	if _, err := f.c.Health(context.Background()); err != nil {
		t.Error(err)
	}
}

// The blog's catch-up example: two people, five messages in 70 seconds,
// two topics. Sent live, one message at a time as the bot does, catch-up
// lists its two conversations: 2001 and 2005, 2002 to 2004.
func TestCatchupSplitsBlogExample(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := &search.Service{DB: db, Config: search.DefaultConfig()}
	srv := &server.Server{DB: db, Rules: segment.DefaultRules, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Search: svc,
		Answer: &answer.Service{DB: db, Search: svc, Config: answer.DefaultConfig()}}
	h := srv.Handler()
	post := func(path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
		return rec
	}
	for _, l := range []struct{ id, author, at, text string }{
		{"2001", "1", "15:02:00", "this really should go on sale"},
		{"2002", "2", "15:02:10", "oh btw there's a new edition out"},
		{"2003", "2", "15:02:25", "maybe i'll buy it used"},
		{"2004", "2", "15:02:40", "wait no, i was given one"},
		{"2005", "1", "15:03:10", "ended up paying full price"},
	} {
		body := fmt.Sprintf(`{"messages":[{"id":%q,"channel_id":"7","author":{"id":%q,"username":"friend%s"},"created_at":"2025-03-01T%sZ","content":%q}]}`,
			l.id, l.author, l.author, l.at, l.text)
		if rec := post("/v1/messages", body); rec.Code != 200 {
			t.Fatalf("message %s: %d %s", l.id, rec.Code, rec.Body)
		}
	}
	rec := post("/v1/catchup", `{"channel":"7","since":"2025-03-01"}`)
	var out api.CatchupResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != 200 {
		t.Fatalf("catch-up: %d %s", rec.Code, rec.Body)
	}
	var got []string
	for _, c := range out.Conversations {
		var ids []string
		for _, m := range c.Preview {
			ids = append(ids, m.ID.String())
		}
		got = append(got, fmt.Sprintf("%d %v", c.MessageCount, ids))
	}
	slices.Sort(got)
	if want := []string{"2 [2001 2005]", "3 [2002 2003 2004]"}; !slices.Equal(got, want) {
		t.Errorf("catch-up conversations %q, want %q", got, want)
	}
}
