package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"dsearch/searchd/export"
	"dsearch/searchd/ingest"
	"dsearch/searchd/segment"
)

// evalFloor measures where a model puts answers and non-answers, to choose
// its --min-similarity (min_similarity in dsearch-model.json). Each set
// is a directory of exports and a queries.jsonl of the eval retrieval
// format. A query's answer score is its best cosine to a relevant message;
// its "no answer" score is its best cosine to the messages of the other
// sets, which hold nothing it asks for. Messages stand in for segments: in
// the sets where one message is one segment they are the same.
func (m *Main) evalFloor(ctx context.Context, cfg *Config, sets []string) error {
	if len(sets) < 2 {
		return errors.New("eval floor: give two or more set directories (each: exports and queries.jsonl)")
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	model, err := cfg.LoadModel()
	if err != nil {
		return err
	}
	defer model.Close()
	type set struct {
		ids     map[int64]int // message id → row of vecs
		vecs    [][]float32
		queries []evalQuery
		qvecs   [][]float32
	}
	loaded := make([]set, len(sets))
	for i, dir := range sets {
		s := &loaded[i]
		if s.queries, err = readQueries(filepath.Join(dir, "queries.jsonl")); err != nil {
			return err
		}
		ids, texts, err := messageTexts(dir)
		if err != nil {
			return err
		}
		if s.vecs, err = model.EmbedPassages(ctx, texts); err != nil {
			return err
		}
		s.ids = map[int64]int{}
		for row, id := range ids {
			s.ids[id] = row
		}
		for _, q := range s.queries {
			v, err := model.EmbedQuery(ctx, q.Query)
			if err != nil {
				return err
			}
			s.qvecs = append(s.qvecs, v)
		}
	}
	best := func(q []float32, vecs [][]float32, skip func(int) bool) float64 {
		top := -1.0
		for row, v := range vecs {
			if skip == nil || !skip(row) {
				top = max(top, dot(q, v))
			}
		}
		return top
	}
	// answer: best relevant; none: best in the other sets; gap: how far the
	// answer is below the best of its own set; runnerUp: how far the best
	// non-answer is below an answer ranked first.
	var answer, none, gap, runnerUp []float64
	for i, s := range loaded {
		for qi, q := range s.queries {
			relevant := map[int]bool{}
			for _, r := range q.Relevant {
				id, _ := strconv.ParseInt(r, 10, 64)
				if row, ok := s.ids[id]; ok {
					relevant[row] = true
				}
			}
			if len(relevant) == 0 {
				continue
			}
			qv := s.qvecs[qi]
			a := best(qv, s.vecs, func(row int) bool { return !relevant[row] })
			other := best(qv, s.vecs, func(row int) bool { return relevant[row] })
			answer, gap = append(answer, a), append(gap, max(0, other-a))
			if a >= other {
				runnerUp = append(runnerUp, a-other)
			}
			n := -1.0
			for j, o := range loaded {
				if j != i {
					n = max(n, best(qv, o.vecs, nil))
				}
			}
			none = append(none, n)
		}
	}
	printFloors(m.Stdout, model.Name(), answer, none, gap, runnerUp)
	return nil
}

// messageTexts are the embedding texts of every message of the exports
// under dir that has one.
func messageTexts(dir string) ([]int64, []string, error) {
	listing, err := ingest.Files([]string{dir})
	files := listing.Files
	if err != nil {
		return nil, nil, err
	}
	var ids []int64
	var texts []string
	for _, path := range files {
		_, msgs, err := export.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		for _, msg := range msgs {
			if t := segment.Text([]string{msg.Content}); t != "" {
				ids, texts = append(ids, msg.ID), append(texts, t)
			}
		}
	}
	return ids, texts, nil
}

func dot(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

func printFloors(w io.Writer, name string, answer, none, gap, runnerUp []float64) {
	for _, x := range [][]float64{answer, none, gap, runnerUp} {
		slices.Sort(x)
	}
	at := func(x []float64, p float64) float64 { return x[int(p*float64(len(x)-1))] }
	above := func(x []float64, f float64) float64 {
		i, _ := slices.BinarySearch(x, f)
		return 100 * float64(len(x)-i) / float64(len(x))
	}
	fmt.Fprintf(w, "%s: %d queries with an answer\n", name, len(answer))
	fmt.Fprintf(w, "answer cosine:            p1 %.3f  p5 %.3f  p10 %.3f  p50 %.3f\n", at(answer, .01), at(answer, .05), at(answer, .1), at(answer, .5))
	fmt.Fprintf(w, "best cosine, no answer:   p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n", at(none, .5), at(none, .9), at(none, .99), at(none, 1))
	fmt.Fprintln(w, "\n floor  answers kept  no-answer queries still answered")
	for f := 0.70; f < 0.865; f += 0.02 {
		fmt.Fprintf(w, " %.2f   %5.1f %%        %5.1f %%\n", f, above(answer, f), above(none, f))
	}
	if len(runnerUp) == 0 {
		return
	}
	fmt.Fprintln(w, "\n margin below the best  answers kept  best non-answer dropped (answer first)")
	for mg := 0.01; mg < 0.055; mg += 0.01 {
		fmt.Fprintf(w, " %.2f                   %5.1f %%        %5.1f %%\n", mg, 100-above(gap, mg+1e-12), above(runnerUp, mg))
	}
}
