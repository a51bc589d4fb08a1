// Package index keeps the segment vectors the search scans, and the
// background job that computes them.
package index

import (
	"context"
	"fmt"
	"math"
	"sync"

	"dsearch/searchd/sqlite"
)

// Matrix holds unit vectors contiguously, row by row, so a scan is one
// tight loop over memory. Each row is quantized to int8 with its own
// scale (max |x| / 127): a quarter of the memory of float32 and a scan
// about twice as fast, since scanning is bound by memory bandwidth; the
// ranking it gives is measured against float32 in docs/retrieval.md. It
// follows inserts and deletes; safe for concurrent use.
type Matrix struct {
	mu    sync.RWMutex
	dim   int
	ids   []int64
	data  []int8
	scale []float32
	row   map[int64]int
}

// NewMatrix returns an empty matrix of dim-dimensional vectors.
func NewMatrix(dim int) *Matrix {
	return &Matrix{dim: dim, row: map[int64]int{}}
}

// LoadMatrix reads every current segment vector from the database.
func LoadMatrix(ctx context.Context, db *sqlite.DB, dim int) (*Matrix, error) {
	m := NewMatrix(dim)
	err := db.EachSegmentVector(ctx, dim, func(id int64, vec []float32) { m.Upsert(id, vec) })
	if err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	return m, nil
}

// Dim is the vector dimension.
func (m *Matrix) Dim() int { return m.dim }

// Len is the number of vectors.
func (m *Matrix) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.ids)
}

// Upsert adds or replaces the vector of id (copied).
func (m *Matrix) Upsert(id int64, vec []float32) {
	if len(vec) != m.dim {
		panic(fmt.Sprintf("index: vector of %d dimensions in a %d-dimensional matrix", len(vec), m.dim))
	}
	q, scale := quantize(vec)
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.row[id]; ok {
		copy(m.data[r*m.dim:], q)
		m.scale[r] = scale
		return
	}
	m.row[id] = len(m.ids)
	m.ids = append(m.ids, id)
	m.data = append(m.data, q...)
	m.scale = append(m.scale, scale)
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

// Delete removes id's vector, if present, moving the last row into its
// place.
func (m *Matrix) Delete(id int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.row[id]
	if !ok {
		return
	}
	last := len(m.ids) - 1
	if r != last {
		m.ids[r] = m.ids[last]
		copy(m.data[r*m.dim:(r+1)*m.dim], m.data[last*m.dim:])
		m.scale[r] = m.scale[last]
		m.row[m.ids[r]] = r
	}
	m.ids = m.ids[:last]
	m.data = m.data[:last*m.dim]
	m.scale = m.scale[:last]
	delete(m.row, id)
}

// Vector returns id's vector as the matrix holds it (dequantized), or nil.
func (m *Matrix) Vector(id int64) []float32 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.row[id]
	if !ok {
		return nil
	}
	out := make([]float32, m.dim)
	for i, x := range m.data[r*m.dim : (r+1)*m.dim] {
		out[i] = float32(x) * m.scale[r]
	}
	return out
}

// IDs returns the IDs held, in row order.
func (m *Matrix) IDs() []int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]int64(nil), m.ids...)
}
