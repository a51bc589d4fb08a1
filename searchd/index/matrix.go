// Package index keeps the segment vectors the search scans, and the
// background job that computes them.
package index

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"dsearch/searchd/sqlite"
)

// Matrix holds unit vectors contiguously, row by row, so a scan is one
// tight loop over memory. Each row is quantized to int8 with its own
// scale (max |x| / 127): a quarter of the memory of float32 and a scan
// about twice as fast, since scanning is bound by memory bandwidth; the
// ranking it gives is measured against float32 in docs/retrieval.md. It
// follows inserts and deletes; safe for concurrent use.
//
// A segment longer than the model's input has a row per window (a run of
// its messages, see segment.Windows), and scores as its best window.
type Matrix struct {
	mu    sync.RWMutex
	dim   int
	ids   []int64
	first []int32 // the row's window: index of its first message
	data  []int8
	scale []float32
	multi []bool          // the row's segment has several windows
	rows  map[int64][]int // a segment's rows, in window order
	// windowed are the segments with several windows.
	windowed map[int64]bool
	sk       *sketches // from sketchRows rows on (sketch.go)
}

// Window is a vector of the messages of a segment from First on.
type Window struct {
	First  int
	Vector []float32
}

// NewMatrix returns an empty matrix of dim-dimensional vectors.
func NewMatrix(dim int) *Matrix {
	return &Matrix{dim: dim, rows: map[int64][]int{}, windowed: map[int64]bool{}}
}

// LoadMatrix reads every current segment vector from the database.
func LoadMatrix(ctx context.Context, db *sqlite.DB, dim int) (*Matrix, error) {
	m := NewMatrix(dim)
	if err := db.EachSegmentVector(ctx, dim, m.add); err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	return m, nil
}

// Dim is the vector dimension.
func (m *Matrix) Dim() int { return m.dim }

// Len is the number of segments with vectors.
func (m *Matrix) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.rows)
}

// Rows is the number of vectors, windows counted.
func (m *Matrix) Rows() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.ids)
}

// Upsert makes vec the only vector of id (copied).
func (m *Matrix) Upsert(id int64, vec []float32) {
	m.UpsertWindows(id, []Window{{0, vec}})
}

// UpsertWindows replaces id's vectors with its windows' (copied).
func (m *Matrix) UpsertWindows(id int64, ws []Window) {
	for _, w := range ws {
		if len(w.Vector) != m.dim {
			panic(fmt.Sprintf("index: vector of %d dimensions in a %d-dimensional matrix", len(w.Vector), m.dim))
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.delete(id)
	for _, w := range ws {
		m.addLocked(id, w.First, w.Vector)
	}
}

// add appends one window of id; LoadMatrix's callback.
func (m *Matrix) add(id int64, first int, vec []float32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addLocked(id, first, vec)
}

func (m *Matrix) addLocked(id int64, first int, vec []float32) {
	q, scale := quantize(vec)
	rows := append(m.rows[id], len(m.ids))
	m.rows[id] = rows
	m.ids = append(m.ids, id)
	m.first = append(m.first, int32(first))
	m.data = append(m.data, q...)
	m.scale = append(m.scale, scale)
	m.multi = append(m.multi, len(rows) > 1)
	if len(rows) == 2 {
		m.multi[rows[0]] = true
		m.windowed[id] = true
	}
	switch {
	case m.sk != nil:
		m.sk.bits = m.sk.appendRow(m.sk.bits, q, scale)
	case len(m.ids) >= sketchRows:
		m.sketchAll()
	}
}

// quantize maps v to int8 with the scale that restores it.
func quantize(v []float32) ([]int8, float32) {
	var maxAbs float32
	for _, x := range v {
		maxAbs = max(maxAbs, x, -x)
	}
	q := make([]int8, len(v))
	if maxAbs == 0 {
		return q, 0
	}
	scale := maxAbs / 127
	for i, x := range v {
		q[i] = int8(math.Round(float64(x / scale)))
	}
	return q, scale
}

// Delete removes id's vectors, if any.
func (m *Matrix) Delete(id int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.delete(id)
}

// delete removes id's rows.
func (m *Matrix) delete(id int64) {
	m.removeRows(m.rows[id])
	delete(m.rows, id)
	delete(m.windowed, id)
}

// removeRows removes rows, moving the last rows into their places, and
// leaves m.rows of their segment to the caller.
func (m *Matrix) removeRows(rows []int) {
	rows = slices.Clone(rows)
	slices.Sort(rows)
	for i := len(rows) - 1; i >= 0; i-- { // from the end: a later row may move
		r, last := rows[i], len(m.ids)-1
		if r != last {
			moved := m.ids[last]
			m.ids[r], m.first[r], m.scale[r], m.multi[r] = moved, m.first[last], m.scale[last], m.multi[last]
			copy(m.data[r*m.dim:(r+1)*m.dim], m.data[last*m.dim:])
			other := m.rows[moved]
			other[slices.Index(other, last)] = r
			if m.sk != nil {
				m.sk.moveRow(r, last)
			}
		}
		m.ids, m.first, m.scale, m.multi = m.ids[:last], m.first[:last], m.scale[:last], m.multi[:last]
		m.data = m.data[:last*m.dim]
		if m.sk != nil {
			m.sk.truncate(last)
		}
	}
}

// ReplaceWindows gives id, which keeps its first window, the further
// windows ws (copied); nothing when id has no vector.
func (m *Matrix) ReplaceWindows(id int64, ws []Window) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rows := m.rows[id]
	if len(rows) == 0 {
		return
	}
	m.rows[id] = rows[:1]
	m.removeRows(rows[1:]) // the first may move; m.rows[id] follows it
	m.multi[m.rows[id][0]] = false
	delete(m.windowed, id)
	for _, w := range ws {
		m.addLocked(id, w.First, w.Vector)
	}
}

// Vector returns id's first window's vector as the matrix holds it
// (dequantized), or nil.
func (m *Matrix) Vector(id int64) []float32 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	rows, ok := m.rows[id]
	if !ok {
		return nil
	}
	r := rows[0]
	out := make([]float32, m.dim)
	for i, x := range m.data[r*m.dim : (r+1)*m.dim] {
		out[i] = float32(x) * m.scale[r]
	}
	return out
}

// IDs returns the IDs held.
func (m *Matrix) IDs() []int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := make([]int64, 0, len(m.rows))
	for id := range m.rows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
