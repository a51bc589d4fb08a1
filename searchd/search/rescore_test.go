package search

import (
	"context"
	"testing"

	"dsearch/searchd/sqlite"
)

// countingEmbedder embeds every passage as the same unit vector, counting.
type countingEmbedder struct{ passages int }

func (e *countingEmbedder) Dim() int { return 2 }
func (e *countingEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return []float32{1, 0}, nil
}
func (e *countingEmbedder) EmbedPassages(_ context.Context, texts []string) ([][]float32, error) {
	e.passages += len(texts)
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

// A message without a stored vector is embedded on the fly, unless
// searches are queueing: then it waits for the job.
func TestEmbedMissingYieldsWhenBusy(t *testing.T) {
	for _, busy := range []bool{false, true} {
		e := &countingEmbedder{}
		q := &query{svc: &Service{Embedder: e, Config: DefaultConfig(), Busy: func() bool { return busy }}}
		msgs := map[int64][]sqlite.StoredMessage{1: {{ID: 7, Content: "the boiler broke again this morning"}}}
		vecs := map[int64][]float32{}
		q.embedMissing(context.Background(), msgs, vecs)
		want := 1
		if busy {
			want = 0
		}
		if e.passages != want || q.embedded != want || len(vecs) != want {
			t.Errorf("busy %v: embedded %d (counted %d, vectors %d), want %d", busy, e.passages, q.embedded, len(vecs), want)
		}
	}
}
