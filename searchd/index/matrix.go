// Package index keeps the segment vectors the search scans, and the
// background job that computes them.
package index

import (
	"context"
	"fmt"
	"sync"

	"dsearch/searchd/sqlite"
)

// Matrix holds unit vectors contiguously, row by row, so a scan is one
// tight loop over memory. It follows inserts and deletes; safe for
// concurrent use.
type Matrix struct {
	mu   sync.RWMutex
	dim  int
	ids  []int64
	data []float32
	row  map[int64]int
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
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.row[id]; ok {
		copy(m.data[r*m.dim:], vec)
		return
	}
	m.row[id] = len(m.ids)
	m.ids = append(m.ids, id)
	m.data = append(m.data, vec...)
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
		m.row[m.ids[r]] = r
	}
	m.ids = m.ids[:last]
	m.data = m.data[:last*m.dim]
	delete(m.row, id)
}

// Vector returns a copy of id's vector, or nil.
func (m *Matrix) Vector(id int64) []float32 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.row[id]
	if !ok {
		return nil
	}
	return append([]float32(nil), m.data[r*m.dim:(r+1)*m.dim]...)
}

// IDs returns the IDs held, in row order.
func (m *Matrix) IDs() []int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return append([]int64(nil), m.ids...)
}
