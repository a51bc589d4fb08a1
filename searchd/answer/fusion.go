package answer

import (
	"cmp"
	"slices"

	"dsearch/searchd/search"
)

// fusionWeights are the RRF weights of a plan's rankings, n of them, the
// question's own at index question (-1: none).
//
// Without the question among them (the rules plan, whose only subquery
// is the question; --keep-question off) each ranking counts once: plain
// RRF. With it, each of the model's subqueries still counts once and the
// question's ranking counts qw times all of them together, never less
// than once. Under plain RRF a bad plan's two or three subqueries,
// agreeing with each other on what the question does not ask, outvote
// the question itself (Gemma 3 270M on locomo-dev lost 1.8 points of
// recall@10 so; docs/answers.md). Weighted, what the subqueries find
// among the question's own results still rises by their votes (a good
// plan's evidence), while what they alone find, even first in every one
// of them, comes after the question's first 61 results at qw = 2 (2n/(k
// + r) > n/(k + 1) for r < 62 with k = 60). At qw = 1 it would tie with
// the question's result of the same rank, interleaving a bad plan's
// results with the question's (measured: Gemma 3 270M then still lost
// 1.2 points; at 2, 0.8; docs/answers.md).
func fusionWeights(n, question int, qw float64) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	if question >= 0 && question < n && n > 1 {
		w[question] = max(1, qw*float64(n-1))
	}
	return w
}

// rrf scores keys by weighted reciprocal rank over ranked lists:
// Σ weights[i] / (k + rank in list i), from rank 1. It returns the keys
// in the order first seen, their scores, and their rank in list question
// (from 1; 0 when not in it, or question is -1).
func rrf(lists [][]int64, weights []float64, question int, k float64) ([]int64, map[int64]float64, map[int64]int) {
	score := map[int64]float64{}
	qrank := map[int64]int{}
	var keys []int64
	for i, l := range lists {
		for rank, key := range l {
			if _, ok := score[key]; !ok {
				keys = append(keys, key)
			}
			score[key] += weights[i] / (k + float64(rank+1))
			if i == question && qrank[key] == 0 {
				qrank[key] = rank + 1
			}
		}
	}
	return keys, score, qrank
}

// byQuestionRank orders keys the question ranked before those it did
// not, and by its rank: the tie-break of weighted RRF.
func byQuestionRank(qrank map[int64]int, a, b int64) int {
	ra, rb := qrank[a], qrank[b]
	switch {
	case ra == rb:
		return 0
	case ra == 0:
		return 1
	case rb == 0:
		return -1
	}
	return cmp.Compare(ra, rb)
}

// fuseResults fuses ranked results by segment (a message outside any
// segment by itself), ties by the question's rank, then by segment.
func fuseResults(lists [][]search.Result, weights []float64, question int, k float64) []search.Result {
	keyLists := make([][]int64, len(lists))
	first := map[int64]search.Result{}
	for i, list := range lists {
		for _, r := range list {
			key := r.SegmentID
			if key == 0 {
				key = -r.MessageID
			}
			keyLists[i] = append(keyLists[i], key)
			if f, ok := first[key]; !ok {
				first[key] = r
			} else if r.Confidence.High && !f.Confidence.High {
				// Confident in one subquery's search: confident.
				f.Confidence = r.Confidence
				first[key] = f
			}
		}
	}
	keys, score, qrank := rrf(keyLists, weights, question, k)
	slices.SortStableFunc(keys, func(a, b int64) int {
		return cmp.Or(cmp.Compare(score[b], score[a]), byQuestionRank(qrank, a, b),
			cmp.Compare(first[a].SegmentID, first[b].SegmentID))
	})
	out := make([]search.Result, len(keys))
	for i, key := range keys {
		out[i] = first[key]
		out[i].Score = score[key]
	}
	return out
}

// fuseIDs fuses ranked ID lists by weighted reciprocal rank, ties by the
// question's rank, then by ID.
func fuseIDs(lists [][]int64, weights []float64, question int, k float64) []int64 {
	ids, score, qrank := rrf(lists, weights, question, k)
	slices.SortStableFunc(ids, func(a, b int64) int {
		return cmp.Or(cmp.Compare(score[b], score[a]), byQuestionRank(qrank, a, b), cmp.Compare(a, b))
	})
	return ids
}
