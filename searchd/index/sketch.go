package index

import (
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// From sketchRows rows on, a scan ranks the rows by a bit sketch first and
// scores only the closest exactly. The exact scan reads every row's 384
// bytes (292 MB at 6.5 M messages, 22–29 ms, bound by memory); a sketch
// is a bit per dimension, 48 bytes, and the scan of them with popcounts
// runs about 8× faster (docs/benchmarks.md, "A first pass by sketches").
// Below it, at the blog's scale (76,000 segments at 650,000 messages) and
// on every evaluation set, the scan stays exact.
var sketchRows = 1 << 18

// Candidates the sketch pass keeps for the exact scores: at least
// sketchCandidates, and candidatesPerResult a result asked for. Over
// real vectors of the evaluation sets, 20–40 candidates a result kept
// 98–99.8 % of the exact top 10 (the same page).
var (
	sketchCandidates    = 4096
	candidatesPerResult = 64
)

// spreadSample: the spread of a sketched scan is counted exactly over
// every segment, and its mean and deviation over one in spreadSample,
// scored exactly: about 2,000 of the 32,000 or more a sketched scan
// judges against when its filter is search's (an eighth of sketchRows'
// segments, search.topKSpread), so the mean is off by about 2 % of the
// deviation, and a z-score by a few hundredths; over every segment when
// the sample holds fewer than minSample.
var spreadSample = 16

// sampled tells the rows whose segments' scores measure a sketched
// scan's spread: runs of sampleRun rows, one run in spreadSample, picked
// by a hash of the run's place. Runs, since rows picked one by one lie
// apart in memory and each costs a wait for it (14 ms a scan at 6.5 M,
// half of the exact scan's time); picked by a hash, since a stride could
// fall in step with how the rows were added (in a test, every segment
// with windows, which score by their best: a mean too high).
func sampled(r int) bool {
	return (uint64(r/sampleRun)*0x9e3779b97f4a7c15)>>32%uint64(spreadSample) == 0
}

const sampleRun = 64

// sketches are the rows' signs about the rows' mean: centred, since the
// model's vectors share most of their direction (e5's cosines are
// 0.7–0.9 between unrelated texts), and the signs of raw vectors agree
// on most dimensions whatever the text (a third of the exact top 10 was
// lost without it, measured).
type sketches struct {
	words  int       // uint64s per row
	center []float32 // the mean row when the sketches were made
	bits   []uint64
}

// sketchAll makes the sketches of every row, about their mean.
func (m *Matrix) sketchAll() {
	center := make([]float64, m.dim)
	for r := range m.ids {
		for i, x := range m.data[r*m.dim : (r+1)*m.dim] {
			center[i] += float64(x) * float64(m.scale[r])
		}
	}
	sk := &sketches{words: (m.dim + 63) / 64, center: make([]float32, m.dim)}
	for i, c := range center {
		sk.center[i] = float32(c / float64(len(m.ids)))
	}
	sk.bits = make([]uint64, 0, len(m.ids)*sk.words)
	for r := range m.ids {
		sk.bits = sk.appendRow(sk.bits, m.data[r*m.dim:(r+1)*m.dim], m.scale[r])
	}
	m.sk = sk
}

// appendRow appends the sketch of a row quantized as q8 with scale.
func (sk *sketches) appendRow(dst []uint64, q8 []int8, scale float32) []uint64 {
	n := len(dst)
	dst = append(dst, make([]uint64, sk.words)...)
	for i, x := range q8 {
		if float32(x)*scale > sk.center[i] {
			dst[n+i/64] |= 1 << (i % 64)
		}
	}
	return dst
}

// query is q's sketch.
func (sk *sketches) query(q []float32) []uint64 {
	out := make([]uint64, sk.words)
	for i, x := range q {
		if x > sk.center[i] {
			out[i/64] |= 1 << (i % 64)
		}
	}
	return out
}

// moveRow copies row from's sketch onto row to's.
func (sk *sketches) moveRow(to, from int) {
	copy(sk.bits[to*sk.words:(to+1)*sk.words], sk.bits[from*sk.words:])
}

func (sk *sketches) truncate(rows int) { sk.bits = sk.bits[:rows*sk.words] }

// skipped marks a row the sketch pass leaves out (not within).
const skipped = math.MaxUint16

// sketchScan is scan's result from the sketches: each row's distance to
// the query's sketch, the closest rows (of within, and of allow when
// apart) scored exactly, their segments by their best window; and the
// spread over within, counted exactly and measured over a sample.
func (m *Matrix) sketchScan(q []float32, q8 []int8, qscale float32, k int, allow, within func(int64) bool, apart bool) ([]Scored, Spread, []Scored) {
	sk := m.sk
	qs := sk.query(q)
	n := len(m.ids)
	dist := make([]uint16, n)
	parts := min(runtime.GOMAXPROCS(0), 8)
	spreads := make([]Spread, parts)
	counts := make([]int, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Go(func() {
			var sp Spread
			counted, inSample := 0, false
			words, sketch, ids, multi, dist := sk.words, sk.bits, m.ids, m.multi, dist
			for r := lo; r < hi; r++ {
				if r%sampleRun == 0 || r == lo {
					inSample = sampled(r)
				}
				id := ids[r]
				if within != nil && !within(id) {
					dist[r] = skipped
					continue
				}
				row := sketch[r*words : (r+1)*words : (r+1)*words]
				q := qs[:len(row)]
				d := 0
				for i, w := range row {
					d += bits.OnesCount64(w ^ q[i])
				}
				dist[r] = uint16(d)
				// A segment counts once, at its first window, scored by
				// its best.
				if multi[r] && m.rows[id][0] != r {
					continue
				}
				counted++
				if inSample {
					sp.add(m.bestScore(q8, qscale, id, r))
				}
			}
			spreads[p], counts[p] = sp, counted
		})
	}
	wg.Wait()
	// How many rows lie at each distance: where the closest end.
	hist := make([]int, sk.words*64+1)
	for _, d := range dist {
		if d != skipped {
			hist[d]++
		}
	}
	var sample Spread
	total := 0
	for p := range parts {
		sample.merge(spreads[p])
		total += counts[p]
	}
	want := max(sketchCandidates, candidatesPerResult*k)
	cands := closest(dist, hist, want)
	if apart && allow != nil {
		// The top is among allow, which the closest of within may miss.
		cands = append(cands, closestAmong(m, dist, want, allow)...)
	}
	// Every candidate's segment, scored exactly by its best window, in
	// row order (memory read forward); a segment with several windows
	// once.
	slices.Sort(cands)
	t, lead := topK{k: k}, topK{k: 2}
	var seen map[int64]bool
	for i, r := range cands {
		if i > 0 && cands[i-1] == r {
			continue
		}
		id := m.ids[r]
		if m.multi[r] {
			if seen[id] {
				continue
			}
			if seen == nil {
				seen = map[int64]bool{}
			}
			seen[id] = true
		}
		s := Scored{id, m.bestScore(q8, qscale, id, r)}
		lead.offer(s)
		if !apart || allow == nil || allow(id) {
			t.offer(s)
		}
	}
	if sample.N < minSample && sample.N < total {
		// Few of within's segments fell in the sampled runs (within
		// admits few of a large matrix: a server whose vectors are being
		// computed): their spread, exactly.
		sample = m.exactSpread(q8, qscale, within)
	}
	spread := sample.scaledTo(total)
	if !apart {
		return ranked(t.h, k), spread, nil
	}
	return ranked(t.h, k), spread, ranked(lead.h, 2)
}

// minSample is the fewest segments a sampled spread is measured over.
const minSample = 1000

// exactSpread is the spread of every segment within admits, each by its
// best window.
func (m *Matrix) exactSpread(q8 []int8, qscale float32, within func(int64) bool) Spread {
	var sp Spread
	for r, id := range m.ids {
		if within != nil && !within(id) || m.multi[r] && m.rows[id][0] != r {
			continue
		}
		sp.add(m.bestScore(q8, qscale, id, r))
	}
	return sp
}

// bestScore is segment id's similarity by its best window; r is its row
// when it has one.
func (m *Matrix) bestScore(q8 []int8, qscale float32, id int64, r int) float32 {
	if !m.multi[r] {
		return m.score(q8, qscale, r)
	}
	best := float32(math.Inf(-1))
	for _, w := range m.rows[id] {
		best = max(best, m.score(q8, qscale, w))
	}
	return best
}

// closest lists the want rows of smallest distance (ties by row order),
// or every row not skipped when fewer: hist counts the distances.
func closest(dist []uint16, hist []int, want int) []int {
	limit, below := 0, 0
	for limit < len(hist) && below+hist[limit] < want {
		below += hist[limit]
		limit++
	}
	atLimit := want - below // rows at the limit's distance still taken
	out := make([]int, 0, want)
	for r, d := range dist {
		if int(d) < limit || int(d) == limit && atLimit > 0 {
			if int(d) == limit {
				atLimit--
			}
			out = append(out, r)
		}
	}
	return out
}

// closestAmong is closest over the rows of allow's segments only.
func closestAmong(m *Matrix, dist []uint16, want int, allow func(int64) bool) []int {
	hist := make([]int, m.sk.words*64+1)
	admitted := make([]uint16, len(dist))
	for r, d := range dist {
		admitted[r] = skipped
		if d != skipped && allow(m.ids[r]) {
			admitted[r] = d
			hist[d]++
		}
	}
	return closest(admitted, hist, want)
}

// scaledTo is a sample's spread with its mean and deviation as measured
// and N the number of vectors it stands for.
func (s Spread) scaledTo(n int) Spread {
	if s.N == 0 {
		return Spread{}
	}
	f := float64(n) / float64(s.N)
	out := Spread{N: n, sum: s.sum * f, sumSq: s.sumSq * f}
	out.finish()
	return out
}
