package index

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// A segment embedded as several windows competes once, with its best
// window, and gives each window's score; deleting it removes every row,
// whatever moves into their places.
func TestMatrixWindows(t *testing.T) {
	m := NewMatrix(2)
	m.Upsert(1, []float32{1, 0})
	m.UpsertWindows(2, []Window{{0, []float32{0, 1}}, {5, []float32{0.9, 0.1}}, {9, []float32{0.5, 0.5}}})
	m.Upsert(3, []float32{0.8, 0.2})
	top := m.TopK([]float32{1, 0}, 3, nil)
	ids := []int64{}
	for _, s := range top {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []int64{1, 2, 3}) || math.Abs(float64(top[1].Score)-0.9) > 0.02 {
		t.Errorf("TopK = %v, want 1, 2 (its window at message 5, 0.9), 3 once each", top)
	}
	if m.Len() != 3 || m.Rows() != 5 {
		t.Errorf("%d segments, %d rows; want 3, 5", m.Len(), m.Rows())
	}
	ws := m.WindowScores([]float32{1, 0}, 2)
	if len(ws) != 3 || ws[0].First != 0 || ws[1].First != 5 || ws[2].First != 9 || ws[0].Score > 0.01 {
		t.Errorf("window scores %v", ws)
	}
	if got := m.TopK([]float32{1, 0}, 1, func(id int64) bool { return id == 2 }); len(got) != 1 || got[0].ID != 2 {
		t.Errorf("filtered to the windowed segment: %v", got)
	}
	m.Upsert(2, []float32{0, 1}) // one window again
	if m.Rows() != 3 || len(m.WindowScores([]float32{1, 0}, 2)) != 1 {
		t.Errorf("re-embedded as one window: %d rows", m.Rows())
	}
	m.UpsertWindows(2, []Window{{0, []float32{0, 1}}, {4, []float32{1, 0}}})
	m.Delete(1) // a window of 2 moves into row 0
	if v := m.Vector(3); v == nil || math.Abs(float64(v[0])-0.8) > 0.01 {
		t.Errorf("3 after the move: %v", v)
	}
	if ws := m.WindowScores([]float32{1, 0}, 2); len(ws) != 2 || ws[1].First != 4 || ws[1].Score < 0.99 {
		t.Errorf("2 after the move: %v", ws)
	}
	m.Delete(2)
	m.Delete(3)
	if m.Rows() != 0 || m.Len() != 0 || len(m.windowed) != 0 || len(m.data) != 0 {
		t.Errorf("not empty: %d rows", m.Rows())
	}
}

// countingEmbedder counts tokens as words.
type countingEmbedder struct{ fakeEmbedder }

func (c *countingEmbedder) PassageTokens(texts []string) ([]int, int, error) {
	n := make([]int, len(texts))
	for i, t := range texts {
		n[i] = len(strings.Fields(t))
	}
	return n, 40, nil
}

// A conversation longer than one input is embedded whole: its later
// messages get windows, stored, and loaded back with the matrix.
func TestJobEmbedsLongSegmentsAsWindows(t *testing.T) {
	db := setup(t)
	var long []searchd.Message
	for i := range 12 {
		long = append(long, msg(int64(100+i), 10*time.Hour+time.Duration(i)*time.Minute,
			fmt.Sprintf("message %d talks about the weekend trip to the mountains", i))) // 10 words
	}
	if _, err := db.Apply(context.Background(), &searchd.Batch{Messages: long}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	e := &countingEmbedder{fakeEmbedder{name: "fake"}}
	j := newJob(db, e)
	if err := j.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 11 tokens a message with its separator, 40 an input: 3 a window.
	seg := j.Matrix.ids[len(j.Matrix.ids)-1]
	ws := j.Matrix.WindowScores(make([]float32, 8), seg)
	firsts := []int{}
	for _, w := range ws {
		firsts = append(firsts, w.First)
	}
	if !slices.Equal(firsts, []int{0, 3, 6, 9}) {
		t.Fatalf("windows start at %v, want 0 3 6 9", firsts)
	}
	if j.Matrix.Len() != 3 {
		t.Errorf("%d segments in the matrix, want 3", j.Matrix.Len())
	}
	loaded, err := LoadMatrix(context.Background(), db, 8)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Rows() != j.Matrix.Rows() || !slices.Equal(loaded.Vector(seg), j.Matrix.Vector(seg)) {
		t.Errorf("loaded %d rows, the job made %d", loaded.Rows(), j.Matrix.Rows())
	}
	q := j.Matrix.Vector(seg)
	if a, b := loaded.WindowScores(q, seg), j.Matrix.WindowScores(q, seg); !slices.Equal(a, b) {
		t.Errorf("loaded windows %v, made %v", a, b)
	}
}

// Vectors made before windows existed keep serving while the job adds the
// windows long segments need, embedding nothing else again.
func TestJobAddsWindowsToOldVectors(t *testing.T) {
	ctx := context.Background()
	db := setup(t)
	var long []searchd.Message
	for i := range 12 {
		long = append(long, msg(int64(100+i), 10*time.Hour+time.Duration(i)*time.Minute,
			fmt.Sprintf("message %d talks about the weekend trip to the mountains", i)))
	}
	if _, err := db.Apply(ctx, &searchd.Batch{Messages: long}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	e := &countingEmbedder{fakeEmbedder{name: "fake"}}
	if err := newJob(db, e).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	// As a database from before migration 0008 would be.
	raw, err := sql.Open("sqlite", "file:"+db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`DELETE FROM segment_windows; UPDATE segment_vectors SET windowed = 0`); err != nil {
		t.Fatal(err)
	}
	before, _ := LoadMatrix(ctx, db, 8)
	version, _ := db.IndexVersion(ctx)

	e.texts.Store(0)
	j := newJob(db, e)
	j.Matrix = before
	if err := j.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.texts.Load(); n != 3 {
		t.Errorf("embedded %d texts, want the 3 further windows alone", n)
	}
	seg := int64(0)
	for _, id := range before.IDs() {
		if len(before.WindowScores(make([]float32, 8), id)) > 1 {
			seg = id
		}
	}
	after, _ := LoadMatrix(ctx, db, 8)
	if seg == 0 || before.Rows() != after.Rows() || !slices.Equal(before.Vector(seg), after.Vector(seg)) {
		t.Errorf("the job's matrix has %d rows, the database %d (segment %d)", before.Rows(), after.Rows(), seg)
	}
	if v, _ := db.IndexVersion(ctx); v != version {
		t.Error("new windows changed the index version: vectors are not messages, cursors must survive them")
	}
	e.texts.Store(0)
	version, _ = db.IndexVersion(ctx)
	if err := newJob(db, e).RunOnce(ctx); err != nil || e.texts.Load() != 0 {
		t.Errorf("a second run embedded %d texts (%v)", e.texts.Load(), err)
	}
	if v, _ := db.IndexVersion(ctx); v != version {
		t.Error("a run with nothing to do changed the index version")
	}
}
