// Package server is searchd's HTTP API, served over the Unix socket.
package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"dsearch/searchd/answer"
	"dsearch/searchd/index"
	"dsearch/searchd/search"
	"dsearch/searchd/segment"
	"dsearch/searchd/socket"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
)

// Limits on requests.
const (
	maxBodyBytes   = 8 << 20
	maxNeighbours  = 50
	maxSegmentMsgs = 1000
)

// Server serves the API. Fields must be set before Handler or Serve.
type Server struct {
	DB      *sqlite.DB
	Rules   segment.Rules
	Log     *slog.Logger
	Version string
	// UID is the only peer UID allowed to connect; os.Getuid() by default.
	UID *int
	// Embedding, if set, is the running embedding job and its model.
	Embedding *Embedding
	// Search answers /v1/search.
	Search *search.Service
	// Answer answers /v1/query.
	Answer *answer.Service
	// BotSpool is the bot's default spool (DATA/bot-spool): an opt-out
	// takes the member out of the batches searchd refused, kept in its
	// rejected/, whoever asked for it. "" cleans none.
	BotSpool string
	// Searches and Queries bound /v1/search and /v1/query (and catch-up)
	// running at once and waiting; defaults when nil. Questions have
	// their own gate: they wait on the LLM for seconds.
	Searches, Queries *Gate
	// BodyTimeout bounds the wait for a request's header and body; 30 s
	// when 0.
	BodyTimeout time.Duration

	rejected rejectedCleaner
}

// Embedding is what the server knows of the embedding side.
type Embedding struct {
	Model   string
	Backend string
	Dim     int
	Job     *index.Job
	Matrix  *index.Matrix
}

type ctxKey int

const peerUIDKey ctxKey = 0

// Serve serves on ln until ctx is done, then shuts down gracefully:
// in-flight requests get up to grace to finish. Closing the listener
// removes the socket file.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	// Requests must outlive the signal that stops the server: a batch
	// being applied when SIGTERM comes finishes (within grace) instead
	// of failing with "request canceled". Those still running when
	// grace runs out are canceled as Serve returns.
	base, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: min(10*time.Second, cmp.Or(s.BodyTimeout, 30*time.Second)),
		// A request's body, too, comes in time or not at all (gate.go
		// reads it before a request waits its turn).
		ReadTimeout: cmp.Or(s.BodyTimeout, 30*time.Second),
		BaseContext: func(net.Listener) context.Context { return base },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if jc, ok := c.(*jsonConn); ok {
				c = jc.Conn
			}
			uid, err := socket.PeerUID(c)
			if err != nil {
				uid = -1
			}
			return context.WithValue(ctx, peerUIDKey, uid)
		},
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(jsonListener{ln}) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		s.Log.Warn("shutdown: requests still running after the grace period are canceled", "grace", grace)
		hs.Close()
	}
	<-errc
	s.waitRejected(sctx)
	return err
}

// Handler returns the API's routes.
func (s *Server) Handler() http.Handler {
	met := newMetrics(s)
	if s.Searches == nil {
		s.Searches = defaultGate()
	}
	if s.Queries == nil {
		s.Queries = defaultGate()
	}
	if s.Search != nil && s.Search.Busy == nil {
		s.Search.Busy = func() bool { return s.Searches.Queued() || s.Queries.Queued() }
	}
	if s.Answer != nil && s.Answer.LLM != nil {
		if _, done := s.Answer.LLM.(timedLLM); !done {
			s.Answer.LLM = timedLLM{inner: s.Answer.LLM, m: met}
		}
	}
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Use(s.guard)
	r.Use(met.instrument)
	r.Method("GET", "/v1/metrics", met.handler())
	r.Get("/v1/healthz", s.handle(s.health))
	r.Get("/v1/stats", s.handle(s.stats))
	r.Post("/v1/messages", s.handle(s.postMessages))
	r.Get("/v1/messages/{id}", s.handle(s.message))
	r.Get("/v1/segments/{id}", s.handle(s.segment))
	r.Get("/v1/search", s.Searches.wrap(s, s.handle(s.search)))
	r.Post("/v1/query", s.Queries.wrap(s, s.handle(s.query)))
	r.Get("/v1/aliases", s.handle(s.aliases))
	r.Get("/v1/channels", s.handle(s.channels))
	r.Post("/v1/catchup", s.Queries.wrap(s, s.handle(s.catchup)))
	r.Get("/v1/backfill/{channel}", s.handle(s.backfill))
	r.Put("/v1/backfill/{channel}", s.handle(s.setBackfill))
	r.Get("/v1/optouts/{user}", s.handle(s.optOutStatus))
	r.Put("/v1/optouts/{user}", s.handle(s.optOut))
	r.Delete("/v1/optouts/{user}", s.handle(s.optIn))
	r.Get("/v1/channels/{channel}/message-ids", s.handle(s.messageIDs))
	r.Get("/v1/guilds/{guild}/channels", s.handle(s.guildChannels))
	r.Post("/v1/gone", s.handle(s.gone))
	r.Post("/v1/outdated", s.handle(s.outdated))
	r.NotFound(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return errorf(http.StatusNotFound, "no route %s %s", r.Method, r.URL.Path)
	}))
	r.MethodNotAllowed(s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return errorf(http.StatusMethodNotAllowed, "method %s not allowed on %s", r.Method, r.URL.Path)
	}))
	return r
}

// guard admits only local requests from our own user: a peer of another
// UID is refused, and so is anything a browser sent (Origin or Referer),
// so a web page cannot reach the socket through some proxy.
func (s *Server) guard(next http.Handler) http.Handler {
	want := os.Getuid()
	if s.UID != nil {
		want = *s.UID
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if uid, ok := r.Context().Value(peerUIDKey).(int); ok && uid != want {
			s.writeError(w, r, errorf(http.StatusForbidden, "peer uid %d is not allowed", uid))
			return
		}
		if r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "" {
			s.writeError(w, r, errorf(http.StatusForbidden, "browser requests are not allowed"))
			return
		}
		// r.URL.Query() drops what it cannot parse, a filter included:
		// "channel=…%zz" searched every channel.
		v, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			s.writeError(w, r, errorf(http.StatusBadRequest, "malformed query string (percent-encode it)"))
			return
		}
		for k, vs := range v { // text, not bytes: searched, embedded, sent to the LLM
			if !utf8.ValidString(k) || !utf8.ValidString(strings.Join(vs, "")) {
				s.writeError(w, r, errorf(http.StatusBadRequest, "the query string is not UTF-8 text"))
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// httpError is an error with a status and a message safe to show, and
// optionally an api.Error code.
type httpError struct {
	status int
	msg    string
	code   string
	// retry: the request, not what it carries, failed (badBatch keeps
	// it a plain error).
	retry bool
}

func (e *httpError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// badBatch marks err (a request error) as caused by the batch itself, so
// the bot sets the batch aside instead of retrying it (api.CodeBadBatch).
func badBatch(err error) error {
	var he *httpError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he) && he.retry:
		return err
	case errors.As(err, &he):
		return &httpError{status: he.status, msg: he.msg, code: api.CodeBadBatch}
	case errors.As(err, &mbe):
		return &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body over %d bytes", mbe.Limit), code: api.CodeBadBatch}
	}
	return err
}

// handle adapts a handler that returns an error. Errors the client caused
// carry their status; anything else is logged and answered with a bare
// 500, so internal details never leave the daemon.
func (s *Server) handle(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var he *httpError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &he):
	case errors.As(err, &mbe):
		he = &httpError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body over %d bytes", mbe.Limit)}
	case errors.Is(err, sqlite.ErrNotFound):
		he = &httpError{status: http.StatusNotFound, msg: "not found"}
	case errors.Is(err, context.Canceled):
		he = &httpError{status: 499, msg: "request canceled"}
	case sqlite.IsFull(err):
		s.Log.Error("request failed: the disk is full", "method", r.Method, "path", r.URL.Path)
		he = &httpError{status: http.StatusInsufficientStorage, msg: "searchd's disk is full: nothing was written; free some space (searchd doctor shows where its data is) and try again"}
	case errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET):
		// The client left before the answer was written: nothing failed
		// here, and there is no one to answer.
		s.Log.Debug("client went away", "method", r.Method, "path", r.URL.Path)
		return
	default:
		s.Log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		he = &httpError{status: http.StatusInternalServerError, msg: "internal error"}
	}
	writeJSON(w, he.status, api.Error{Message: he.msg, Code: he.code})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body strictly: unknown fields and trailing data are
// errors.
func decode(r *http.Request, v any) error {
	body := &bodyReader{r: r.Body}
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		if body.err != nil {
			// The link's fault (a body slower than the timeout, a
			// client gone), not the body's: a retry may pass.
			return &httpError{status: http.StatusRequestTimeout, msg: "the request's body did not arrive whole in time: send it again", retry: true}
		}
		if errors.Is(err, io.EOF) {
			return errorf(http.StatusBadRequest, "empty request body")
		}
		return errorf(http.StatusBadRequest, "invalid JSON body: %v", err)
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "invalid JSON body: trailing data")
	}
	return nil
}

// bodyReader keeps the error reading a request's body, which is the
// connection's, where the JSON decoder's own errors are the body's.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

func pathID(r *http.Request) (int64, error) { return pathParamID(r, "id") }

func pathParamID(r *http.Request, name string) (int64, error) {
	s := chi.URLParam(r, name)
	id, err := strconv.ParseInt(s, 10, 64)
	// Negative IDs are real: snowflakes of archives older than Discord.
	if err != nil || id == 0 {
		return 0, errorf(http.StatusBadRequest, "invalid id %q", s)
	}
	return id, nil
}

// intParam reads an optional integer query parameter within [0, max].
func intParam(r *http.Request, name string, def, max int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > max {
		return 0, errorf(http.StatusBadRequest, "%s must be an integer from 0 to %d", name, max)
	}
	return n, nil
}
