package segeval

import (
	"math"
	"testing"
)

func TestPerfectAndTrivial(t *testing.T) {
	gold := map[int64]int64{1: 1, 2: 1, 3: 2, 4: 2, 5: 3}
	s := Score(gold, gold)
	if s.OneMinusVI != 100 || s.OneToOne != 100 || s.F != 100 || s.Gold != 2 {
		t.Errorf("perfect: %+v", s)
	}
	// Everything in one cluster: 1-1 is the largest gold cluster's share.
	one := map[int64]int64{1: 9, 2: 9, 3: 9, 4: 9, 5: 9}
	s = Score(gold, one)
	if math.Abs(s.OneToOne-40) > 1e-9 || s.F != 0 || s.OneMinusVI >= 100 {
		t.Errorf("one cluster: %+v", s)
	}
	// Missing guesses are singletons.
	s = Score(gold, map[int64]int64{})
	if math.Abs(s.OneToOne-60) > 1e-9 || s.Guessed != 0 {
		t.Errorf("singletons: %+v", s)
	}
}

func TestOneToOneNeedsOptimalMatching(t *testing.T) {
	// Greedy matching of the largest overlap first (g1↔p1, 3) leaves g2
	// with p2 (0): total 3. The optimum pairs g1↔p2 (2) and g2↔p1 (2): 4.
	w := [][]float64{{3, 2}, {2, 0}}
	if got := maxMatching(w); got != 4 {
		t.Errorf("maxMatching = %v, want 4", got)
	}
	if got := maxMatching([][]float64{{1, 5, 2}}); got != 5 {
		t.Errorf("rectangular: %v", got)
	}
}

func TestVIKnownValue(t *testing.T) {
	// Gold {1,2},{3,4}; guess {1,3},{2,4}: H(G|P) = H(P|G) = log 2, so
	// VI = 2 log 2 and 1 - VI/log 4 = 0.
	s := Score(map[int64]int64{1: 1, 2: 1, 3: 2, 4: 2}, map[int64]int64{1: 1, 3: 1, 2: 2, 4: 2})
	if math.Abs(s.OneMinusVI) > 1e-9 {
		t.Errorf("1-VI = %v, want 0", s.OneMinusVI)
	}
}
