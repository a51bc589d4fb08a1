package index

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sketchTestSizes makes sketched scans start at 1,000 rows and keep few
// candidates, so that a small matrix shows what a large one does; and
// restores them.
func sketchTestSizes(t *testing.T) {
	rows, cands, per, sample := sketchRows, sketchCandidates, candidatesPerResult, spreadSample
	sketchRows, sketchCandidates, candidatesPerResult, spreadSample = 1000, 150, 15, 2
	t.Cleanup(func() {
		sketchRows, sketchCandidates, candidatesPerResult, spreadSample = rows, cands, per, sample
	})
}

// exactly runs f with sketched scans off.
func exactly(f func()) {
	rows := sketchRows
	sketchRows = math.MaxInt
	defer func() { sketchRows = rows }()
	f()
}

// topicMatrix is n unit vectors like a text model's: a direction every
// text shares, a topic's (one of topics), and the text's own; every
// tenth segment has three windows.
func topicMatrix(r *rand.Rand, n, dim, topics int) *Matrix {
	shared := randomUnit(r, dim)
	centres := make([][]float32, topics)
	for i := range centres {
		centres[i] = randomUnit(r, dim)
	}
	m := NewMatrix(dim)
	vec := func() []float32 {
		c, own := centres[r.IntN(topics)], randomUnit(r, dim)
		v := make([]float32, dim)
		for i := range v {
			v[i] = 2*shared[i] + c[i] + 0.6*own[i]
		}
		return unit(v)
	}
	for id := int64(0); id < int64(n); id++ {
		if id%10 == 0 {
			m.UpsertWindows(id, []Window{{0, vec()}, {20, vec()}, {40, vec()}})
			continue
		}
		m.Upsert(id, vec())
	}
	return m
}

func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return unit(v)
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(s))
	}
	return v
}

// A sketched scan gives nearly the exact scan's top, each result with its
// exact score, the first always; the spread over every segment, counted
// exactly and measured closely; and with a filter, the top among it and
// the leaders of all.
func TestSketchScanIsNearlyTheScan(t *testing.T) {
	sketchTestSizes(t)
	r := rand.New(rand.NewPCG(7, 8))
	m := topicMatrix(r, 4000, 96, 40)
	if m.sk == nil {
		t.Fatal("no sketches at 4,000 segments")
	}
	half := func(id int64) bool { return id%2 == 0 }
	const k = 10
	found, asked := 0, 0
	for i := range 60 {
		q := m.Vector(int64(r.IntN(4000)))
		for j := range q {
			q[j] += float32(r.NormFloat64()) * 0.05
		}
		q = unit(q)
		var top, want, ftop, fwant, wtop, wwant, leaders, wantLeaders []Scored
		var spread, wantSpread, fspread, fwantSpread, wspread, wwantSpread Spread
		top, spread = m.TopKSpread(q, k, nil)
		ftop, fspread, leaders = m.TopKSpreadWithin(q, k, half, nil)
		wtop, wspread = m.TopKSpread(q, k, half)
		exactly(func() {
			want, wantSpread = m.TopKSpread(q, k, nil)
			fwant, fwantSpread, wantLeaders = m.TopKSpreadWithin(q, k, half, nil)
			wwant, wwantSpread = m.TopKSpread(q, k, half)
		})
		if wwantSpread.N != 2000 || spread.N != 4000 {
			t.Fatalf("the exact scans judged %d and %d segments", wwantSpread.N, spread.N)
		}
		for _, c := range []struct {
			name       string
			got, want  []Scored
			sp, wantSp Spread
		}{{"all", top, want, spread, wantSpread}, {"half", ftop, fwant, fspread, fwantSpread},
			{"half alone", wtop, wwant, wspread, wwantSpread}} {
			if len(c.got) != k || c.got[0] != c.want[0] {
				t.Fatalf("query %d, %s: first %v, want %v", i, c.name, c.got[:1], c.want[:1])
			}
			exact := map[int64]float32{}
			for _, s := range c.want {
				exact[s.ID] = s.Score
			}
			for _, s := range c.got {
				if e, ok := exact[s.ID]; ok {
					found++
					if e != s.Score {
						t.Fatalf("query %d: %d scored %v, exactly %v", i, s.ID, s.Score, e)
					}
				}
			}
			asked += k
			if c.sp.N != c.wantSp.N {
				t.Fatalf("query %d: spread over %d segments, want %d", i, c.sp.N, c.wantSp.N)
			}
			// Half sampled: four standard errors.
			sampledN := float64(c.wantSp.N) / 2
			if d := math.Abs(c.sp.Mean - c.wantSp.Mean); d > 4*c.wantSp.Std/math.Sqrt(sampledN) {
				t.Errorf("query %d: mean %.4f, exactly %.4f (deviation %.4f)", i, c.sp.Mean, c.wantSp.Mean, c.wantSp.Std)
			}
			if d := math.Abs(c.sp.Std/c.wantSp.Std - 1); d > 4/math.Sqrt(2*sampledN) {
				t.Errorf("query %d: deviation %.4f, exactly %.4f", i, c.sp.Std, c.wantSp.Std)
			}
		}
		if !slices.Equal(leaders, wantLeaders) {
			t.Fatalf("query %d: leaders %v, want %v", i, leaders, wantLeaders)
		}
		for _, s := range ftop {
			if !half(s.ID) {
				t.Fatalf("query %d: %d is not among those allowed", i, s.ID)
			}
		}
	}
	if share := float64(found) / float64(asked); share < 0.95 {
		t.Errorf("the sketched scans found %.1f %% of the exact top %d, want 95 %% or more", 100*share, k)
	}
}

// The sketches follow the rows through deletes, replaced windows and
// rows moved into the places of those deleted.
func TestSketchesFollowTheRows(t *testing.T) {
	sketchTestSizes(t)
	r := rand.New(rand.NewPCG(9, 10))
	m := topicMatrix(r, 1200, 70, 12)
	for id := int64(0); id < 1200; id += 7 {
		m.Delete(id)
	}
	for id := int64(3); id < 1200; id += 11 {
		m.Upsert(id, randomUnit(r, 70))
	}
	for id := int64(20); id < 1200; id += 30 {
		m.ReplaceWindows(id, []Window{{9, randomUnit(r, 70)}})
	}
	if len(m.sk.bits) != len(m.ids)*m.sk.words {
		t.Fatalf("%d sketch words for %d rows", len(m.sk.bits), len(m.ids))
	}
	for row := range m.ids {
		want := m.sk.appendRow(nil, m.data[row*m.dim:(row+1)*m.dim], m.scale[row])
		if got := m.sk.bits[row*m.sk.words : (row+1)*m.sk.words]; !slices.Equal(got, want) {
			t.Fatalf("row %d (segment %d): sketch %x, its vector's %x", row, m.ids[row], got, want)
		}
	}
}

// Below sketchRows a scan is exact, and a matrix has no sketches.
func TestNoSketchesBelowTheirSize(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	if m := topicMatrix(r, 500, 32, 5); m.sk != nil {
		t.Fatal("sketches at 500 rows")
	}
}

// BenchmarkTopKSketched scans 760,000 × 384 (the 6.5 M-message
// benchmark's segments with the default model) by sketches first, then
// exactly.
func BenchmarkTopKSketched(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	m := NewMatrix(384)
	for id := int64(0); id < 760000; id++ {
		m.Upsert(id, randomUnit(r, 384))
	}
	q := randomUnit(r, 384)
	b.Run("sketched", func(b *testing.B) {
		for b.Loop() {
			m.TopKSpread(q, 40, nil)
		}
	})
	b.Run("exact", func(b *testing.B) {
		exactly(func() {
			for b.Loop() {
				m.TopKSpread(q, 40, nil)
			}
		})
	})
}

// A sketched scan whose within admits segments none of whose first rows
// lies in a sampled run reported a spread over 0 segments; a sample of too
// few gives way to every segment's exact scores.
func TestSketchSpreadOfFewSegmentsIsExact(t *testing.T) {
	sketchTestSizes(t)
	r := rand.New(rand.NewPCG(7, 8))
	m := topicMatrix(r, 4000, 96, 40)
	admit := map[int64]bool{}
	for id, rows := range m.rows {
		if !sampled(rows[0]) && len(admit) < 40 {
			admit[id] = true
		}
	}
	within := func(id int64) bool { return admit[id] }
	q := m.Vector(5)
	_, sp := m.TopKSpread(q, 10, within)
	var want Spread
	exactly(func() { _, want = m.TopKSpread(q, 10, within) })
	if sp.N != want.N || math.Abs(sp.Mean-want.Mean) > 1e-9 || math.Abs(sp.Std-want.Std) > 1e-9 {
		t.Errorf("sketched spread over %d segments (mean %.3f, deviation %.3f), exactly %d (mean %.3f, deviation %.3f)",
			sp.N, sp.Mean, sp.Std, want.N, want.Mean, want.Std)
	}
}
