package index

import (
	"cmp"
	"container/heap"
	"math"
	"runtime"
	"slices"
	"sync"
)

// Scored is a vector's similarity to a query.
type Scored struct {
	ID    int64
	Score float32
}

// better orders results: higher score first, then lower ID, so equal
// scores rank the same way every time.
func better(a, b Scored) bool {
	return a.Score > b.Score || (a.Score == b.Score && a.ID < b.ID)
}

// TopK returns the k vectors most similar to q by dot product (cosine, for
// unit vectors), best first, among the IDs allow accepts (all when allow
// is nil). It is an exact scan, split across cores when large.
func (m *Matrix) TopK(q []float32, k int, allow func(int64) bool) []Scored {
	top, _ := m.TopKSpread(q, k, allow)
	return top
}

// Spread is how a query's similarities spread over all the vectors a
// scan saw (one per segment: its best window).
type Spread struct {
	N          int
	Mean, Std  float64
	sum, sumSq float64
}

func (s *Spread) add(x float32) {
	s.N++
	s.sum += float64(x)
	s.sumSq += float64(x) * float64(x)
}

// Add counts x in, Mean and Std included: a spread kept outside a scan.
func (s *Spread) Add(x float64) {
	s.N++
	s.sum += x
	s.sumSq += x * x
	s.finish()
}

func (s *Spread) merge(o Spread) {
	s.N, s.sum, s.sumSq = s.N+o.N, s.sum+o.sum, s.sumSq+o.sumSq
}

func (s *Spread) finish() {
	if s.N == 0 {
		return
	}
	n := float64(s.N)
	s.Mean = s.sum / n
	s.Std = math.Sqrt(max(0, s.sumSq/n-s.Mean*s.Mean))
}

// TopKSpread is TopK, and the spread of the scores of every vector it
// considered: what tells a result that stands out from the query's
// similarity to everything searched (search's confidence).
func (m *Matrix) TopKSpread(q []float32, k int, allow func(int64) bool) ([]Scored, Spread) {
	top, spread, _ := m.scan(q, k, allow, allow, false)
	return top, spread
}

// TopKSpreadWithin is TopKSpread among the IDs allow accepts, with the
// spread and the two most similar of those within accepts instead (nil:
// all), which must hold allow's, in one pass over the matrix: a search
// narrowed by keywords judges its results against every conversation of
// its channels, which took a second scan of the whole matrix (22–29 ms at
// 6.5 M messages).
func (m *Matrix) TopKSpreadWithin(q []float32, k int, allow, within func(int64) bool) (top []Scored, spread Spread, leaders []Scored) {
	return m.scan(q, k, allow, within, true)
}

// scan is the top k among allow, and over within (allow itself unless
// apart) the spread and, if apart, the two most similar: exact, or from
// sketches first in a large matrix (sketch.go).
func (m *Matrix) scan(q []float32, k int, allow, within func(int64) bool, apart bool) ([]Scored, Spread, []Scored) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(q) != m.dim || k <= 0 {
		return nil, Spread{}, nil
	}
	q8, qscale := quantize(q)
	if m.sk != nil && len(m.ids) >= sketchRows {
		return m.sketchScan(q, q8, qscale, k, allow, within, apart)
	}
	score := func(r int) float32 { return m.score(q8, qscale, r) }
	// A segment with several windows competes once, with its best.
	best := map[int64]int{}
	for id := range m.windowed {
		if within != nil && !within(id) {
			continue
		}
		rows := m.rows[id]
		b, bs := rows[0], score(rows[0])
		for _, r := range rows[1:] {
			if s := score(r); s > bs {
				b, bs = r, s
			}
		}
		best[id] = b
	}
	n := len(m.ids)
	parts := 1
	if n >= 4096 {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	tops := make([]topK, parts)
	leads := make([]topK, parts)
	spreads := make([]Spread, parts)
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Kept on this goroutine's stack and stored once: the parts'
			// slots share cache lines, and writing them per row made the
			// cores pass those lines back and forth (a third of the
			// scan's time at 760,000 rows).
			t, lead, sp := topK{k: k}, topK{k: 2}, Spread{}
			for r := lo; r < hi; r++ {
				id := m.ids[r]
				if within != nil && !within(id) || m.multi[r] && best[id] != r {
					continue
				}
				s := score(r)
				sp.add(s)
				if !apart {
					t.offer(Scored{id, s})
					continue
				}
				lead.offer(Scored{id, s})
				if allow == nil || allow(id) {
					t.offer(Scored{id, s})
				}
			}
			tops[p], leads[p], spreads[p] = t, lead, sp
		}()
	}
	wg.Wait()
	var all, leaders []Scored
	var spread Spread
	for p, t := range tops {
		all = append(all, t.h...)
		leaders = append(leaders, leads[p].h...)
		spread.merge(spreads[p])
	}
	spread.finish()
	if !apart {
		return ranked(all, k), spread, nil
	}
	return ranked(all, k), spread, ranked(leaders, 2)
}

// TopKSpreadAmong is TopKSpread over the segments ids only, each scored
// by its own rows: for a filter that admits few segments, which a scan
// would read the whole matrix to find (292 MB at 6.5 M messages). IDs
// without a vector are passed over.
func (m *Matrix) TopKSpreadAmong(q []float32, k int, ids []int64) ([]Scored, Spread) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(q) != m.dim || k <= 0 {
		return nil, Spread{}
	}
	q8, qscale := quantize(q)
	t, sp := topK{k: k}, Spread{}
	for _, id := range ids {
		rows := m.rows[id]
		if len(rows) == 0 {
			continue
		}
		bs := float32(math.Inf(-1))
		for _, r := range rows {
			bs = max(bs, m.score(q8, qscale, r))
		}
		sp.add(bs)
		t.offer(Scored{id, bs})
	}
	sp.finish()
	return ranked(t.h, k), sp
}

// score is row r's similarity to a query quantized as q8 with qscale.
func (m *Matrix) score(q8 []int8, qscale float32, r int) float32 {
	return float32(dot8(q8, m.data[r*m.dim:(r+1)*m.dim])) * qscale * m.scale[r]
}

// ranked sorts scores best first and keeps k.
func ranked(all []Scored, k int) []Scored {
	slices.SortFunc(all, func(a, b Scored) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return all[:min(k, len(all))]
}

// WindowScores are the similarities of q to each window of id, in window
// order (none when id has no vector).
func (m *Matrix) WindowScores(q []float32, id int64) []WindowScore {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(q) != m.dim {
		return nil
	}
	q8, qscale := quantize(q)
	var out []WindowScore
	for _, r := range m.rows[id] {
		out = append(out, WindowScore{int(m.first[r]), m.score(q8, qscale, r)})
	}
	return out
}

// WindowScore is a window's similarity to a query.
type WindowScore struct {
	First int // index of the window's first message
	Score float32
}

// dot is the inner product, unrolled into eight independent sums so the
// CPU can overlap them: the scan's hot loop.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		a8, b8 := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += a8[0] * b8[0]
		s1 += a8[1] * b8[1]
		s2 += a8[2] * b8[2]
		s3 += a8[3] * b8[3]
		s4 += a8[4] * b8[4]
		s5 += a8[5] * b8[5]
		s6 += a8[6] * b8[6]
		s7 += a8[7] * b8[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// dot8Go is the inner product of int8 vectors, in eight independent
// sums: dot8 where there is no vector unit to use, and its tail.
func dot8Go(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 int32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		a8, b8 := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += int32(a8[0]) * int32(b8[0])
		s1 += int32(a8[1]) * int32(b8[1])
		s2 += int32(a8[2]) * int32(b8[2])
		s3 += int32(a8[3]) * int32(b8[3])
		s4 += int32(a8[4]) * int32(b8[4])
		s5 += int32(a8[5]) * int32(b8[5])
		s6 += int32(a8[6]) * int32(b8[6])
		s7 += int32(a8[7]) * int32(b8[7])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// Dot is the inner product of two vectors of equal length.
func Dot(a, b []float32) float32 { return dot(a, b) }

// topK keeps the k best offers in a min-heap (worst at the root).
type topK struct {
	k int
	h []Scored
}

func (t *topK) Len() int           { return len(t.h) }
func (t *topK) Less(i, j int) bool { return better(t.h[j], t.h[i]) }
func (t *topK) Swap(i, j int)      { t.h[i], t.h[j] = t.h[j], t.h[i] }
func (t *topK) Push(x any)         { t.h = append(t.h, x.(Scored)) }
func (t *topK) Pop() any {
	x := t.h[len(t.h)-1]
	t.h = t.h[:len(t.h)-1]
	return x
}

func (t *topK) offer(s Scored) {
	if len(t.h) < t.k {
		heap.Push(t, s)
	} else if better(s, t.h[0]) {
		t.h[0] = s
		heap.Fix(t, 0)
	}
}
