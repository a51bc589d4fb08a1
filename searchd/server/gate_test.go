package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"dsearch/shared/api"
)

// The gate runs as many requests as it has slots, queues as many more,
// and refuses the rest at once with a JSON 503 the client can tell apart;
// a request given up while queued leaves its place.
func TestGateQueuesThenRefuses(t *testing.T) {
	s := &Server{Log: slog.New(slog.DiscardHandler)}
	g := NewGate(1, 1)
	release, entered := make(chan struct{}), make(chan struct{}, 3)
	h := g.wrap(s, func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		writeJSON(w, http.StatusOK, struct{}{})
	})
	start := func(ctx context.Context) chan *httptest.ResponseRecorder {
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() {
			rec := httptest.NewRecorder()
			h(rec, httptest.NewRequestWithContext(ctx, "GET", "/v1/search?q=x", nil))
			done <- rec
		}()
		return done
	}
	waitInside := func(n int64) {
		for g.waiting.Load() != n {
			runtime.Gosched()
		}
	}
	first := start(context.Background())
	<-entered
	if g.Queued() {
		t.Error("Queued with one request running and none waiting")
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := start(ctx)
	waitInside(2)
	cancel()
	if rec := <-gaveUp; rec.Code != 499 {
		t.Errorf("canceled while queued: status %d, want 499", rec.Code)
	}
	second := start(context.Background())
	waitInside(2)
	if !g.Queued() {
		t.Error("not Queued with a request waiting for the only slot")
	}

	rec := httptest.NewRecorder()
	h(rec, httptest.NewRequest("GET", "/v1/search?q=x", nil))
	var e api.Error
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusServiceUnavailable ||
		e.Code != api.CodeBusy || rec.Header().Get("Retry-After") == "" {
		t.Errorf("past the queue: status %d, body %q (%v), Retry-After %q; want 503 with code %q",
			rec.Code, rec.Body, err, rec.Header().Get("Retry-After"), api.CodeBusy)
	}
	select {
	case <-entered:
		t.Fatal("a queued request ran while the only slot was taken")
	default:
	}
	close(release)
	for _, done := range []chan *httptest.ResponseRecorder{first, second} {
		if rec := <-done; rec.Code != http.StatusOK {
			t.Errorf("admitted request: status %d", rec.Code)
		}
	}
	if n := g.waiting.Load(); n != 0 {
		t.Errorf("%d requests still counted inside after all left", n)
	}
}

// A request whose body has not all come holds no slot: it is read before
// the request waits its turn, so a client that sends half a body cannot
// stop everyone else's questions.
func TestStalledBodyHoldsNoSlot(t *testing.T) {
	s := &Server{Log: slog.New(slog.DiscardHandler)}
	g := NewGate(1, 4)
	h := g.wrap(s, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		writeJSON(w, http.StatusOK, struct{}{})
	})
	stalled, feed := io.Pipe()
	defer feed.Close()
	go h(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/query", stalled))
	feed.Write([]byte(`{"question":`)) // and no more
	done := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("POST", "/v1/query", strings.NewReader(`{"question":"x"}`)))
		done <- rec.Code
	}()
	select {
	case code := <-done:
		if code != http.StatusOK {
			t.Errorf("the other request: %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a request with half a body held the only slot")
	}
}
