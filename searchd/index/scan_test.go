package index

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkTopK scans the blog's scale: 29,000 segments × 1,024
// dimensions.
func BenchmarkTopK(b *testing.B) {
	const n, dim = 29000, 1024
	r := rand.New(rand.NewPCG(1, 2))
	m := NewMatrix(dim)
	v := make([]float32, dim)
	for i := int64(0); i < n; i++ {
		for k := range v {
			v[k] = r.Float32() - 0.5
		}
		m.Upsert(i, v)
	}
	q := make([]float32, dim)
	for k := range q {
		q[k] = r.Float32() - 0.5
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.TopK(q, 40, nil)
	}
}

func TestDot(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	if got := dot(a, a); got != 285 {
		t.Errorf("dot = %v, want 285", got)
	}
}

// The int8 matrix ranks like float32: on random unit vectors of the
// blog's dimension, the top 40 agree almost entirely.
func TestQuantizedRecall(t *testing.T) {
	const n, dim, k = 5000, 1024, 40
	r := rand.New(rand.NewPCG(3, 4))
	unit := func() []float32 {
		v := make([]float32, dim)
		var s float32
		for i := range v {
			v[i] = float32(r.NormFloat64())
			s += v[i] * v[i]
		}
		for i := range v {
			v[i] /= float32(math.Sqrt(float64(s)))
		}
		return v
	}
	m := NewMatrix(dim)
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = unit()
		m.Upsert(int64(i), vecs[i])
	}
	var agree, total int
	for trial := 0; trial < 20; trial++ {
		// A query near a stored vector, as real queries are near their
		// answers.
		q := append([]float32(nil), vecs[r.IntN(n)]...)
		noise := unit()
		for i := range q {
			q[i] = 0.5*q[i] + 0.5*noise[i]
		}
		exact := &topK{k: k}
		for i, v := range vecs {
			exact.offer(Scored{int64(i), dot(q, v)})
		}
		want := map[int64]bool{}
		for _, s := range exact.h {
			want[s.ID] = true
		}
		for _, s := range m.TopK(q, k, nil) {
			if want[s.ID] {
				agree++
			}
		}
		total += k
	}
	if recall := float64(agree) / float64(total); recall < 0.9 {
		t.Errorf("int8 top-%d recall %.3f against float32; want ≥ 0.9", k, recall)
	} else {
		t.Logf("int8 top-%d recall against float32: %.3f", k, recall)
	}
}
