package index

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"testing"

	"dsearch/searchd/embed"
	"dsearch/searchd/embed/embedtest"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// The first pass gives every segment worth embedding, and each of its
// windows, the mean of its messages' vectors weighted by their tokens,
// over what the model would read of it; search by meaning covers them
// all before any text is embedded. The pass over texts then replaces
// every one (TestJobVectorsMatchOneByOne checks what with).
func TestPoolingPassCoversEverySegment(t *testing.T) {
	dir := t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	m, err := embed.Load(dir, embed.Options{Backend: embed.Go})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	db := chatDatabase(t, 300)
	pending, err := db.PendingSegments(ctx, 0, 1000, segment.MaxTextMessages, true)
	if err != nil {
		t.Fatal(err)
	}
	singles := 0
	for _, p := range pending {
		if parts, _ := segment.Parts(p.Contents); len(parts) == 1 && segment.TextOf(parts) != "" {
			singles++
		}
	}
	if singles == 0 {
		t.Fatal("no segment of one message: the test needs one")
	}
	job := &Job{DB: db, Embedder: m, Matrix: NewMatrix(m.Dim()), SegmentBatch: 1000, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	checked := false
	job.Progress = func(s Status) {
		if s.Phase != "pooling" {
			return
		}
		checked = true
		c, err := db.EmbeddingCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Every segment has a vector: provisional, or final for a
		// segment of one message (its text is that message's).
		if c.SegmentsPooled == 0 || c.SegmentsPooled+c.SegmentsDone != c.Segments || c.SegmentsDone != int64(singles) {
			t.Errorf("after pooling: %+v, want %d of one message final and every other provisional", c, singles)
		}
		windows := 0
		for _, p := range pending {
			windows += checkPooled(t, db, m, job.Matrix, p)
		}
		if windows == 0 {
			t.Error("no segment has further windows: the test needs some")
		}
	}
	if err := job.RunOnce(embed.Background(ctx)); err != nil {
		t.Fatal(err)
	}
	if !checked {
		t.Fatal("no pooling pass")
	}
	if c, err := db.EmbeddingCounts(ctx); err != nil || c.SegmentsPooled != 0 || c.SegmentsDone != c.Segments {
		t.Errorf("after the pass over texts: %+v (%v), want no provisional vector left", c, err)
	}
}

// checkPooled checks p's stored vector and windows against the mean of
// its stored message vectors, and the matrix's row against the store; it
// returns p's further windows.
func checkPooled(t *testing.T, db *sqlite.DB, m *embed.Model, matrix *Matrix, p sqlite.PendingSegment) int {
	t.Helper()
	ctx := context.Background()
	if segment.Text(p.Contents) == "" {
		return 0
	}
	cleaned := make([]string, len(p.Contents))
	for i, c := range p.Contents {
		cleaned[i] = segment.Clean(c)
	}
	tokens, limit, err := m.PassageTokens(cleaned)
	if err != nil {
		t.Fatal(err)
	}
	messages, err := db.MessageVectors(ctx, p.MessageIDs, m.Dim())
	if err != nil {
		t.Fatal(err)
	}
	// The mean over messages [from, to) that fit in one input.
	want := func(from, to int) []float32 {
		sum := make([]float64, m.Dim())
		used := 0
		for i := from; i < to && i < segment.MaxTextMessages; i++ {
			if cleaned[i] == "" {
				continue
			}
			if used > 0 && used+tokens[i]+1 > limit {
				break
			}
			used += tokens[i] + 1
			for d, x := range messages[p.MessageIDs[i]] {
				sum[d] += float64(tokens[i]) * float64(x)
			}
		}
		var norm float64
		for _, x := range sum {
			norm += x * x
		}
		out := make([]float32, len(sum))
		for d, x := range sum {
			out[d] = float32(x / math.Sqrt(norm))
		}
		return out
	}
	// The first window is the whole text, cut by the model.
	firsts, tos := []int{0}, []int{len(p.Contents)}
	for _, w := range segment.Windows(p.Contents, tokens, limit) {
		firsts, tos = append(firsts, w.First), append(tos, w.To)
	}
	stored := map[int][]float32{}
	if err := db.SegmentVectors(ctx, []int64{p.ID}, m.Dim(), func(_ int64, first int, v []float32) {
		stored[first] = append([]float32(nil), v...)
	}); err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(firsts) {
		t.Fatalf("segment %d: %d vectors stored, want %d", p.ID, len(stored), len(firsts))
	}
	for k, first := range firsts {
		what := fmt.Sprintf("segment %d window from message %d", p.ID, first)
		if c := cosine(stored[first], want(first, tos[k])); c < 0.999 {
			t.Errorf("%s: cosine %.5f to the mean of its messages", what, c)
		}
	}
	if matrix.Vector(p.ID) == nil {
		t.Errorf("segment %d is not in the matrix", p.ID)
	}
	return len(firsts) - 1
}

func cosine(a, b []float32) float32 {
	return dot(a, b) / float32(math.Sqrt(float64(dot(a, a)*dot(b, b))))
}
