package index

import (
	"context"
	"errors"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// fakeEmbedder hashes text into a unit vector and counts what it embeds;
// failAfter > 0 makes call number failAfter fail, like a crash mid-way.
type fakeEmbedder struct {
	name      string
	texts     atomic.Int64
	calls     atomic.Int64
	failAfter int64
}

func (f *fakeEmbedder) Name() string { return f.name }
func (f *fakeEmbedder) Dim() int     { return 8 }

func (f *fakeEmbedder) EmbedPassages(_ context.Context, texts []string) ([][]float32, error) {
	if n := f.calls.Add(1); f.failAfter > 0 && n >= f.failAfter {
		return nil, errors.New("model crashed")
	}
	f.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		seed := h.Sum64()
		v := make([]float32, 8)
		var norm float64
		for k := range v {
			seed = seed*6364136223846793005 + 1442695040888963407
			v[k] = float32(int64(seed>>33)%1000) + 1
			norm += float64(v[k]) * float64(v[k])
		}
		for k := range v {
			v[k] /= float32(math.Sqrt(norm))
		}
		out[i] = v
	}
	return out, nil
}

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func msg(id int64, offset time.Duration, content string) searchd.Message {
	return searchd.Message{ID: id, ChannelID: 1, CreatedAt: t0.Add(offset).UnixMicro(), Content: content,
		Type: "Default", Author: searchd.Author{ID: 1, Username: "a"}}
}

// setup stores three conversations: two long enough to embed, one not.
func setup(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b := &searchd.Batch{Messages: []searchd.Message{
		msg(1, 0, "the boiler broke this morning, no hot water"),
		msg(2, time.Minute, "the plumber comes in the afternoon"),
		msg(3, 2*time.Hour, "ㅋㅋ"),
		msg(4, 2*time.Hour+time.Minute, "ok"),
		msg(5, 5*time.Hour, "finished Death Stranding last night, what an ending"),
		msg(6, 5*time.Hour+time.Minute, "the delivery game? is it worth it on sale"),
	}}
	if _, err := db.Apply(context.Background(), b, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	return db
}

func newJob(db *sqlite.DB, e Embedder) *Job {
	return &Job{DB: db, Embedder: e, Matrix: NewMatrix(e.Dim()), Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		SegmentBatch: 1, MessageBatch: 2}
}

func counts(t *testing.T, db *sqlite.DB) *sqlite.EmbeddingCounts {
	t.Helper()
	c, err := db.EmbeddingCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestJobEmbedsEverythingOnce(t *testing.T) {
	db := setup(t)
	ctx := context.Background()
	e := &fakeEmbedder{name: "fake"}
	j := newJob(db, e)
	if err := j.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	c := counts(t, db)
	// 3 segments, one too short; 6 messages, "ㅋㅋ" and "ok" too short.
	if c.Segments != 3 || c.SegmentsDone != 3 || c.SegmentsTooShort != 1 || c.MessagesDone != 6 || c.MessagesTooShort != 2 {
		t.Errorf("counts %+v", c)
	}
	if j.Matrix.Len() != 2 || e.texts.Load() != 2+4 {
		t.Errorf("matrix %d vectors, embedded %d texts", j.Matrix.Len(), e.texts.Load())
	}
	st := j.Status()
	if st.SegmentsDone != 3 || st.MessagesDone != 6 || st.Phase != "idle" || st.InferenceTime <= 0 || st.BusyTime < st.InferenceTime {
		t.Errorf("status %+v", st)
	}
	// Nothing is redone.
	before := e.texts.Load()
	if err := j.RunOnce(ctx); err != nil || e.texts.Load() != before {
		t.Errorf("second run embedded %d more texts (err %v)", e.texts.Load()-before, err)
	}
	// The stored vectors load back into an equal matrix.
	m, err := LoadMatrix(ctx, db, 8)
	if err != nil || m.Len() != 2 {
		t.Fatalf("LoadMatrix: %d, %v", m.Len(), err)
	}
	for _, id := range j.Matrix.IDs() {
		a, b := j.Matrix.Vector(id), m.Vector(id)
		for k := range a {
			if math.Abs(float64(a[k]-b[k])) > 1e-6 {
				t.Fatalf("segment %d: stored vector differs", id)
			}
		}
	}
}

func TestJobResumesAfterCrash(t *testing.T) {
	db := setup(t)
	ctx := context.Background()
	crashing := &fakeEmbedder{name: "fake", failAfter: 3}
	if err := newJob(db, crashing).RunOnce(ctx); err == nil || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("crashing run: %v", err)
	}
	done := counts(t, db)
	if done.SegmentsPooled+done.MessagesDone == 0 || done.SegmentsDone == done.Segments {
		t.Fatalf("crash left %+v; the test wants a partial run", done)
	}
	e := &fakeEmbedder{name: "fake"}
	if err := newJob(db, e).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	c := counts(t, db)
	if c.SegmentsDone != c.Segments || c.MessagesDone != c.Messages {
		t.Errorf("after resume: %+v", c)
	}
	// Only what the crash left undone was embedded again.
	redo := (2 - (done.SegmentsDone - done.SegmentsTooShort)) + (4 - (done.MessagesDone - done.MessagesTooShort))
	if e.texts.Load() != redo {
		t.Errorf("resume embedded %d texts, want %d", e.texts.Load(), redo)
	}
}

func TestJobFollowsChanges(t *testing.T) {
	db := setup(t)
	ctx := context.Background()
	e := &fakeEmbedder{name: "fake"}
	j := newJob(db, e)
	if err := j.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	ids := j.Matrix.IDs()
	old := j.Matrix.Vector(ids[0])
	// An edit makes its segment and its own vector stale.
	edited := msg(1, 0, "the boiler was fixed, the valve was replaced")
	edited.EditedAt = t0.Add(time.Hour).UnixMicro()
	// A deletion empties the other embedded segment... almost: delete
	// both of its messages.
	b := &searchd.Batch{Messages: []searchd.Message{edited}, Deletes: []int64{5, 6}}
	if _, err := db.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	before := e.texts.Load()
	if err := j.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.texts.Load() - before; got != 2 { // the segment and the edited message
		t.Errorf("embedded %d texts after the edit, want 2", got)
	}
	if j.Matrix.Len() != 1 {
		t.Errorf("matrix holds %v; the deleted segment must go", j.Matrix.IDs())
	}
	now := j.Matrix.Vector(ids[0])
	same := true
	for k := range now {
		same = same && now[k] == old[k]
	}
	if now == nil || same {
		t.Error("the edited segment's vector was not recomputed")
	}
	if c := counts(t, db); c.SegmentsDone != c.Segments || c.MessagesDone != c.Messages {
		t.Errorf("counts %+v", c)
	}
}

func TestModelMismatch(t *testing.T) {
	db := setup(t)
	ctx := context.Background()
	if err := db.CheckModel(ctx, "fake", 8, ""); err != nil {
		t.Fatal(err)
	}
	if err := newJob(db, &fakeEmbedder{name: "fake"}).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	err := db.CheckModel(ctx, "other", 16, "")
	if !errors.Is(err, sqlite.ErrModelMismatch) || !strings.Contains(err.Error(), "searchd reindex") {
		t.Fatalf("other model: %v", err)
	}
	if err := db.ResetVectors(ctx, "other", 16, ""); err != nil {
		t.Fatal(err)
	}
	if c := counts(t, db); c.SegmentsDone != 0 || c.MessagesDone != 0 {
		t.Errorf("reset left %+v", c)
	}
	if err := db.CheckModel(ctx, "other", 16, ""); err != nil {
		t.Errorf("after reset: %v", err)
	}
	// The same name and dimension with other weights (another version's
	// conversion, another network copied in) would mix vectors too. A
	// database that knew no weights takes the first it is shown.
	if err := db.CheckModel(ctx, "other", 16, "model.onnx 1000"); err != nil {
		t.Errorf("weights of a database that knew none: %v", err)
	}
	if err := db.CheckModel(ctx, "other", 16, "model.onnx 1000"); err != nil {
		t.Errorf("the same weights: %v", err)
	}
	if err := db.CheckModel(ctx, "other", 16, "model.onnx 2000"); !errors.Is(err, sqlite.ErrModelMismatch) || !strings.Contains(err.Error(), "other weights") {
		t.Errorf("other weights under the same name: %v", err)
	}
	if err := db.ResetVectors(ctx, "other", 16, "model.onnx 2000"); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckModel(ctx, "other", 16, "model.onnx 2000"); err != nil {
		t.Errorf("after reindexing with the new weights: %v", err)
	}
}

func TestMatrix(t *testing.T) {
	m := NewMatrix(2)
	m.Upsert(10, []float32{1, 0})
	m.Upsert(20, []float32{0, 1})
	m.Upsert(30, []float32{1, 1})
	m.Upsert(20, []float32{2, 2}) // replace
	m.Delete(10)                  // the last row moves into its place
	m.Delete(99)                  // absent: nothing
	if m.Len() != 2 || m.Vector(10) != nil {
		t.Fatalf("len %d", m.Len())
	}
	near := func(v []float32, x, y float32) bool {
		return math.Abs(float64(v[0]-x)) < 0.01 && math.Abs(float64(v[1]-y)) < 0.01
	}
	if v := m.Vector(20); !near(v, 2, 2) {
		t.Errorf("20 = %v", v)
	}
	if v := m.Vector(30); !near(v, 1, 1) {
		t.Errorf("30 = %v", v)
	}
	m.Delete(30)
	m.Delete(20)
	if m.Len() != 0 || len(m.data) != 0 {
		t.Errorf("not empty: %v", m.data)
	}
}

func TestTopK(t *testing.T) {
	m := NewMatrix(2)
	for i := int64(1); i <= 5000; i++ { // large enough to split across cores
		x := float32(i%100) / 100
		m.Upsert(i, []float32{x, 1 - x})
	}
	got := m.TopK([]float32{1, 0}, 3, nil)
	// x = 0.99 for IDs 99, 199, 299, ...: ties break by ID (and
	// quantization keeps equal vectors equal).
	if len(got) != 3 || got[0].ID != 99 || got[1].ID != 199 || got[2].ID != 299 {
		t.Errorf("TopK = %v", got)
	}
	odd := m.TopK([]float32{1, 0}, 2, func(id int64) bool { return id%2 == 0 })
	if len(odd) != 2 || odd[0].ID != 98 || math.Abs(float64(odd[0].Score)-0.98) > 0.01 {
		t.Errorf("filtered TopK = %v", odd)
	}
	if len(m.TopK([]float32{1}, 3, nil)) != 0 {
		t.Error("a query of the wrong dimension matched")
	}
}

// The running job picks up messages another process imports, and rests
// when nothing changed.
func TestRunFollowsImports(t *testing.T) {
	db := setup(t)
	e := &fakeEmbedder{name: "fake"}
	j := newJob(db, e)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx, 20*time.Millisecond) }()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for i := 0; i < 200 && !ok(); i++ {
			time.Sleep(10 * time.Millisecond)
		}
		if !ok() {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	// Both passes: the messages, then the conversations' texts.
	waitFor("the whole job", func() bool { c := counts(t, db); return c.MessagesDone == 6 && c.SegmentsDone == c.Segments })
	calls := e.calls.Load()
	time.Sleep(100 * time.Millisecond) // several idle ticks
	if e.calls.Load() != calls {
		t.Errorf("the idle job embedded again without new data")
	}
	if _, err := db.Apply(context.Background(), &searchd.Batch{Messages: []searchd.Message{
		msg(7, 50*time.Hour, "a new message from an import in another process"),
	}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	waitFor("the new message", func() bool { return counts(t, db).MessagesDone == 7 })
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// Converted archives older than Discord (IRC logs, ../shared/eval/irc-dev)
// have negative message IDs: they are embedded like any other, and so are
// the extreme IDs at both ends.
func TestJobEmbedsNegativeIDs(t *testing.T) {
	db := setup(t)
	ctx := context.Background()
	b := &searchd.Batch{Messages: []searchd.Message{
		msg(-1340286991073280000, 10*time.Hour, "an IRC line from 2004 about partitions"),
		msg(-5, 10*time.Hour+time.Minute, "another old line, long enough to embed"),
		msg(math.MinInt64, 10*time.Hour+2*time.Minute, "the smallest id there can be"),
		msg(math.MaxInt64, 10*time.Hour+3*time.Minute, "the largest id there can be"),
	}}
	if _, err := db.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if err := newJob(db, &fakeEmbedder{name: "fake"}).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if c := counts(t, db); c.Messages != 10 || c.MessagesDone != c.Messages {
		t.Errorf("%d of %d messages embedded", c.MessagesDone, c.Messages)
	}
}

// The job's last error is its last pass's: once a pass ends well (the
// disk has room again, the model answers), status stops showing it.
func TestLastErrorClearsWhenAPassEndsWell(t *testing.T) {
	db := setup(t)
	ctx := context.Background()
	e := &fakeEmbedder{name: "fake", failAfter: 1}
	j := newJob(db, e)
	if err := j.RunOnce(ctx); err == nil || j.Status().LastError == "" {
		t.Fatalf("failing pass: %v, status %q", err, j.Status().LastError)
	}
	e.failAfter = 0
	if err := j.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := j.Status().LastError; got != "" {
		t.Errorf("after a pass that ended well, status still says %q", got)
	}
}
