package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"dsearch/shared/api"
)

// Gate bounds the requests that run at once and those that wait. A search
// is CPU work (SQLite, the vector scan, the model) on a machine of a few
// cores: running more at once only makes each slower and holds every
// one's buffers at the same time, so memory grew with each client. Past
// the queue a request is refused at once with 503 and code "busy".
type Gate struct {
	run     chan struct{}
	queue   chan struct{}
	waiting atomic.Int64 // requests inside, running or queued

	mu   sync.Mutex
	busy bool // more than one request was inside since the last release
	idle *time.Timer
}

// NewGate lets running requests run at once and queued more wait.
func NewGate(running, queued int) *Gate {
	return &Gate{run: make(chan struct{}, running), queue: make(chan struct{}, running+queued)}
}

// defaultGate runs one search per core, at least two (one waits on
// SQLite or the model while another computes), and queues 64.
func defaultGate() *Gate { return NewGate(max(2, runtime.GOMAXPROCS(0)), 64) }

// Queued reports whether requests are waiting for a place to run.
func (g *Gate) Queued() bool { return g.waiting.Load() > int64(cap(g.run)) }

// idleAfter is how long the gate stays empty after a busy spell before
// the heap that spell grew is handed back to the OS.
const idleAfter = 2 * time.Second

// wrap admits h's requests through the gate.
func (g *Gate) wrap(s *Server, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The body first, outside the gate: a client that sends half of
		// one held a running slot for as long as it liked, and two of
		// them stopped every question.
		if r.Body != nil && r.Body != http.NoBody {
			body, err := io.ReadAll(r.Body)
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
				s.writeError(w, r, err)
				return
			} else if err != nil {
				s.writeError(w, r, errorf(http.StatusBadRequest, "cannot read the request body: %v", err))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		select {
		case g.queue <- struct{}{}:
		default:
			w.Header().Set("Retry-After", "1")
			s.writeError(w, r, &httpError{status: http.StatusServiceUnavailable, code: api.CodeBusy,
				msg: "searchd is busy: too many searches are waiting; retry shortly"})
			return
		}
		defer g.leave()
		if g.waiting.Add(1) > 1 {
			g.mu.Lock()
			g.busy = true
			g.mu.Unlock()
		}
		select {
		case g.run <- struct{}{}:
			defer func() { <-g.run }()
		case <-r.Context().Done():
			s.writeError(w, r, r.Context().Err())
			return
		}
		h(w, r)
	}
}

// leave lets the next request in; the last one out of a busy spell
// schedules returning memory to the OS.
func (g *Gate) leave() {
	<-g.queue
	if g.waiting.Add(-1) != 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.busy {
		return
	}
	g.busy = false
	if g.idle != nil {
		g.idle.Stop()
	}
	g.idle = time.AfterFunc(idleAfter, func() {
		if g.waiting.Load() == 0 {
			// The Go runtime would return the spell's heap only slowly;
			// a daemon that sits idle most of the day should not keep
			// its peak.
			debug.FreeOSMemory()
		}
	})
}
