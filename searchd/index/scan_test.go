package index

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// benchMatrix is the scan benchmarks' matrix: 29,000 × 1,024 int8, the
// blog's segments at bge-m3's size.
func benchMatrix() (*Matrix, []float32) {
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
	return m, q
}

// BenchmarkTopK scans the blog's scale: 29,000 segments × 1,024
// dimensions.
func BenchmarkTopK(b *testing.B) {
	m, q := benchMatrix()
	b.SetBytes(int64(len(m.data)))
	for b.Loop() {
		m.TopK(q, 40, nil)
	}
}

// BenchmarkScanFloor reads as many bytes as TopK scans, split across as
// many goroutines, and only adds them up as 64-bit words: the
// memory-bandwidth floor to hold the scan against (compare MB/s).
func BenchmarkScanFloor(b *testing.B) {
	m, _ := benchMatrix()
	data := make([]byte, len(m.data))
	for i, x := range m.data {
		data[i] = byte(x)
	}
	parts := min(runtime.GOMAXPROCS(0), 8)
	sums := make([]uint64, parts*8) // a cache line each: no false sharing
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var wg sync.WaitGroup
		for p := range parts {
			lo, hi := p*len(data)/parts&^31, (p+1)*len(data)/parts&^31
			wg.Go(func() {
				// Four independent sums, so that loads, not one chain of
				// additions, set the pace.
				var s0, s1, s2, s3 uint64
				for i := lo; i < hi; i += 32 {
					w := data[i : i+32 : i+32]
					s0 += binary.LittleEndian.Uint64(w[0:])
					s1 += binary.LittleEndian.Uint64(w[8:])
					s2 += binary.LittleEndian.Uint64(w[16:])
					s3 += binary.LittleEndian.Uint64(w[24:])
				}
				sums[p*8] = s0 + s1 + s2 + s3
			})
		}
		wg.Wait()
	}
}

// dot8 (the vector unit's, where there is one) agrees with plain Go at
// every length, extreme values included.
func TestDot8(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 31, 32, 33, 64, 100, 384, 1024, 1031} {
		a, b := make([]int8, n), make([]int8, n+5)
		for i := range a {
			a[i] = int8(r.IntN(256) - 128)
		}
		for i := range b {
			b[i] = int8(r.IntN(256) - 128)
		}
		if got, want := dot8(a, b), dot8Go(a, b[:n]); got != want {
			t.Errorf("n=%d: dot8 = %d, want %d", n, got, want)
		}
		for i := range a {
			a[i], b[i] = -128, -128
		}
		if got, want := dot8(a, b), int32(n*128*128); got != want {
			t.Errorf("n=%d, all -128: dot8 = %d, want %d", n, got, want)
		}
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

// randomVec is a vector of uniform components around 0.
func randomVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for k := range v {
		v[k] = r.Float32() - 0.5
	}
	return v
}

// The spread is of every vector the scan considered (the allowed ones,
// a windowed segment once, by its best window), whatever k is.
func TestTopKSpread(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const dim = 16
	m := NewMatrix(dim)
	vec := func() []float32 { return randomVec(r, dim) }
	for id := int64(1); id <= 5000; id++ {
		m.Upsert(id, vec())
	}
	m.UpsertWindows(7, []Window{{First: 0, Vector: vec()}, {First: 3, Vector: vec()}})
	q := vec()
	allow := func(id int64) bool { return id%3 != 0 }
	top, sp := m.TopKSpread(q, 2, allow)
	var all []float64
	for id := int64(1); id <= 5000; id++ {
		if allow(id) {
			best := float32(-2)
			for _, w := range m.WindowScores(q, id) {
				best = max(best, w.Score)
			}
			all = append(all, float64(best))
		}
	}
	var mean, sq float64
	for _, x := range all {
		mean += x
	}
	mean /= float64(len(all))
	for _, x := range all {
		sq += (x - mean) * (x - mean)
	}
	std := math.Sqrt(sq / float64(len(all)))
	if len(top) != 2 || sp.N != len(all) || math.Abs(sp.Mean-mean) > 1e-4 || math.Abs(sp.Std-std) > 1e-4 {
		t.Errorf("spread %+v (top %d), want n %d mean %.5f std %.5f", sp, len(top), len(all), mean, std)
	}
}

// Scoring a few segments by their own rows finds what the scan finds
// among them: the same top, scores and spread, windowed segments by their
// best window, IDs without a vector passed over.
func TestTopKSpreadAmongMatchesTheScan(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	m, vec := windowedMatrix(r)
	var ids []int64
	allow := map[int64]bool{}
	for id := int64(1); id <= 7000; id += 7 { // past 6000: no vector
		ids = append(ids, id)
		allow[id] = true
	}
	for _, k := range []int{1, 10, 40, 5000} {
		q := vec()
		want, wsp := m.TopKSpread(q, k, func(id int64) bool { return allow[id] })
		got, gsp := m.TopKSpreadAmong(q, k, ids)
		if !slices.Equal(got, want) {
			t.Fatalf("k=%d: top differs:\n%v\n%v", k, got[:min(5, len(got))], want[:min(5, len(want))])
		}
		if gsp.N != wsp.N || math.Abs(gsp.Mean-wsp.Mean) > 1e-9 || math.Abs(gsp.Std-wsp.Std) > 1e-9 {
			t.Errorf("k=%d: spread %+v, the scan's %+v", k, gsp, wsp)
		}
	}
}

// TopKSpreadWithin is the two scans it replaces: the top among allow as
// TopKSpread gives it, and the spread and the two most similar over
// within as TopKSpread over within gives them, windows included.
func TestTopKSpreadWithinIsTwoScans(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	m, vec := windowedMatrix(r)
	allow := func(id int64) bool { return id%7 == 0 }
	within := func(id int64) bool { return id%7 == 0 || id%3 == 0 }
	for _, in := range []func(int64) bool{within, nil} {
		for _, k := range []int{1, 10, 40, 5000} {
			q := vec()
			wantTop, _ := m.TopKSpread(q, k, allow)
			wantLeaders, wantSpread := m.TopKSpread(q, 2, in)
			top, spread, leaders := m.TopKSpreadWithin(q, k, allow, in)
			if !slices.Equal(top, wantTop) {
				t.Fatalf("k=%d: top differs:\n%v\n%v", k, top[:min(5, len(top))], wantTop[:min(5, len(wantTop))])
			}
			if !slices.Equal(leaders, wantLeaders) {
				t.Errorf("k=%d: leaders %v, want %v", k, leaders, wantLeaders)
			}
			if spread.N != wantSpread.N || math.Abs(spread.Mean-wantSpread.Mean) > 1e-9 || math.Abs(spread.Std-wantSpread.Std) > 1e-9 {
				t.Errorf("k=%d: spread %+v, want %+v", k, spread, wantSpread)
			}
		}
	}
}

// windowedMatrix is 6,000 random segments of 32 dimensions, every tenth
// in three windows, and the source of further random vectors.
func windowedMatrix(r *rand.Rand) (*Matrix, func() []float32) {
	const dim = 32
	m := NewMatrix(dim)
	vec := func() []float32 { return randomVec(r, dim) }
	for id := int64(1); id <= 6000; id++ {
		if id%10 == 0 {
			m.UpsertWindows(id, []Window{{First: 0, Vector: vec()}, {First: 4, Vector: vec()}, {First: 9, Vector: vec()}})
		} else {
			m.Upsert(id, vec())
		}
	}
	return m, vec
}
