package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"dsearch/searchd/answer"
	"dsearch/searchd/llm"
)

// metrics are what GET /v1/metrics exposes, in Prometheus text format.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	llmTime  prometheus.Histogram
	llmFails prometheus.Counter
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dsearch_http_requests_total", Help: "API requests by route and status."}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "dsearch_http_request_duration_seconds", Help: "API request latency by route.",
			Buckets: []float64{.001, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 10, 60}}, []string{"route"}),
		llmTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "dsearch_llm_request_duration_seconds", Help: "Ollama call latency.",
			Buckets: []float64{.1, .25, .5, 1, 2.5, 5, 10, 20, 60}}),
		llmFails: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dsearch_llm_failures_total", Help: "Ollama calls that failed (unreachable, slow, empty or invalid)."}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.llmTime, m.llmFails)
	ctx := context.Background()
	gauge := func(name, help string, f func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
	}
	gauge("dsearch_messages", "Stored messages.", func() float64 {
		n, _ := s.DB.MessageCount(ctx)
		return float64(n)
	})
	if s.Search != nil && s.Search.Keywords != nil {
		kw := s.Search.Keywords
		gauge("dsearch_keyword_index_messages", "Messages in the in-memory keyword index (0 while it loads: FTS5 serves).",
			func() float64 { return float64(kw.Len()) })
	}
	if e := s.Embedding; e != nil {
		gauge("dsearch_index_vectors", "Segment vectors in the in-memory matrix.", func() float64 { return float64(e.Matrix.Len()) })
		gauge("dsearch_embedding_backlog_segments", "Segments waiting for a vector.", func() float64 {
			c, err := s.DB.EmbeddingCounts(ctx)
			if err != nil {
				return -1
			}
			return float64(c.Segments - c.SegmentsDone)
		})
		gauge("dsearch_embedding_backlog_messages", "Messages waiting for a vector.", func() float64 {
			c, err := s.DB.EmbeddingCounts(ctx)
			if err != nil {
				return -1
			}
			return float64(c.Messages - c.MessagesDone)
		})
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "dsearch_embedding_segments_total", Help: "Segments embedded since start."},
			func() float64 { return float64(e.Job.Status().SegmentsDone) }))
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "dsearch_embedding_messages_total", Help: "Messages embedded since start."},
			func() float64 { return float64(e.Job.Status().MessagesDone) }))
		gauge("dsearch_embedding_segments_per_second", "Embedding throughput while busy.", func() float64 { return e.Job.Status().SegmentsPerSec })
	}
	return m
}

// instrument counts and times every request by its route pattern (never
// by its URL, which may hold a query).
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = r.Method + " " + rc.RoutePattern()
		}
		m.requests.WithLabelValues(route, strconv.Itoa(ww.Status())).Inc()
		m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// timedLLM records Ollama latencies and failures.
type timedLLM struct {
	inner answer.LLM
	m     *metrics
}

// Name is the model's, so catch-up caches stay keyed by model.
func (t timedLLM) Name() string {
	if n, ok := t.inner.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "llm"
}

func (t timedLLM) Complete(ctx context.Context, r llm.Request) (string, error) {
	start := time.Now()
	out, err := t.inner.Complete(ctx, r)
	t.m.llmTime.Observe(time.Since(start).Seconds())
	if err != nil {
		t.m.llmFails.Inc()
	}
	return out, err
}
