// Package segeval scores a conversation segmentation against gold
// conversations, with the metrics of Kummerfeld et al. (ACL 2019): scaled
// variation of information (1-VI), one-to-one overlap (1-1), and exact
// conversation precision, recall and F1 over conversations of two or more
// messages.
package segeval

import (
	"math"
)

// Scores are in percent, as the paper reports them.
type Scores struct {
	Messages      int
	OneMinusVI    float64
	OneToOne      float64
	P, R, F       float64
	Gold, Guessed int // conversations of two or more messages
}

// Score compares two clusterings of the same messages: gold and guess map
// each message to a cluster label. Messages missing from guess count as
// singletons.
func Score(gold, guess map[int64]int64) Scores {
	// Relabel clusters densely.
	gIdx, pIdx := map[int64]int{}, map[int64]int{}
	type pair struct{ g, p int }
	counts := map[pair]int{}
	gSize, pSize := map[int]int{}, map[int]int{}
	gMembers, pMembers := map[int][]int64{}, map[int][]int64{}
	single := int64(math.MinInt64)
	for msg, gl := range gold {
		g, ok := gIdx[gl]
		if !ok {
			g = len(gIdx)
			gIdx[gl] = g
		}
		pl, ok := guess[msg]
		if !ok {
			pl = single
			single++
		}
		p, ok := pIdx[pl]
		if !ok {
			p = len(pIdx)
			pIdx[pl] = p
		}
		counts[pair{g, p}]++
		gSize[g]++
		pSize[p]++
		gMembers[g] = append(gMembers[g], msg)
		pMembers[p] = append(pMembers[p], msg)
	}
	n := float64(len(gold))
	s := Scores{Messages: len(gold)}
	if n == 0 {
		return s
	}
	// VI = H(G|P) + H(P|G), scaled by log n.
	var vi float64
	for k, c := range counts {
		pc := float64(c) / n
		vi -= pc * (math.Log(float64(c)/float64(pSize[k.p])) + math.Log(float64(c)/float64(gSize[k.g])))
	}
	if n > 1 {
		s.OneMinusVI = 100 * (1 - vi/math.Log(n))
	} else {
		s.OneMinusVI = 100
	}
	// 1-1: the best one-to-one matching of gold to guessed clusters.
	w := make([][]float64, len(gIdx))
	for i := range w {
		w[i] = make([]float64, len(pIdx))
	}
	for k, c := range counts {
		w[k.g][k.p] = float64(c)
	}
	s.OneToOne = 100 * maxMatching(w) / n
	// Exact conversations of two or more messages.
	key := func(ms []int64) string {
		sorted := append([]int64(nil), ms...)
		sortInt64(sorted)
		b := make([]byte, 0, 8*len(sorted))
		for _, m := range sorted {
			for i := 0; i < 8; i++ {
				b = append(b, byte(m>>(8*i)))
			}
		}
		return string(b)
	}
	goldSets := map[string]bool{}
	for _, ms := range gMembers {
		if len(ms) > 1 {
			goldSets[key(ms)] = true
		}
	}
	var match int
	for _, ms := range pMembers {
		if len(ms) > 1 {
			s.Guessed++
			if goldSets[key(ms)] {
				match++
			}
		}
	}
	s.Gold = len(goldSets)
	if s.Guessed > 0 {
		s.P = 100 * float64(match) / float64(s.Guessed)
	}
	if s.Gold > 0 {
		s.R = 100 * float64(match) / float64(s.Gold)
	}
	if s.P+s.R > 0 {
		s.F = 2 * s.P * s.R / (s.P + s.R)
	}
	return s
}

func sortInt64(a []int64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// maxMatching returns the weight of a maximum-weight matching of rows to
// columns (the Hungarian algorithm on the cost max − w, O(n³)).
func maxMatching(w [][]float64) float64 {
	rows := len(w)
	if rows == 0 {
		return 0
	}
	cols := len(w[0])
	n := max(rows, cols)
	var top float64
	for _, r := range w {
		for _, x := range r {
			top = max(top, x)
		}
	}
	cost := func(i, j int) float64 {
		if i < rows && j < cols {
			return top - w[i][j]
		}
		return top
	}
	// Jonker-Volgenant style shortest augmenting paths, 1-indexed.
	u, v := make([]float64, n+1), make([]float64, n+1)
	p, way := make([]int, n+1), make([]int, n+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		minv := make([]float64, n+1)
		used := make([]bool, n+1)
		for j := range minv {
			minv[j] = math.Inf(1)
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], math.Inf(1), 0
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				if c := cost(i0-1, j-1) - u[i0] - v[j]; c < minv[j] {
					minv[j], way[j] = c, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	var total float64
	for j := 1; j <= n; j++ {
		if i := p[j]; i >= 1 && i <= rows && j <= cols {
			total += w[i-1][j-1]
		}
	}
	return total
}
