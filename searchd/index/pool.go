package index

import (
	"context"
	"math"
	"time"
	"unicode/utf8"

	"dsearch/searchd/sqlite"
)

// pool gives each passage the mean of its messages' vectors, weighted by
// their lengths in tokens (as the model's mean over the text's tokens
// would weigh them), over the messages the model would read of it (the
// first window is cut at the model's limit). Each message is embedded once
// and stored for rescoring, so the message pass that follows has only what
// no passage holds; those embedded before are read back. A passage with
// no message long enough to embed keeps no vector, and its segment waits
// for the pass over texts. A segment of one message needs no more: its
// text is the message's, embedded here by the same weights (unless
// messages have their own), so its vector is final.
//
// Measured on locomo-dev (docs/benchmarks.md, "Embedding each token
// once"): semantic recall@10 78.0 with the texts' vectors, 76.6 with
// these, in 2.6× less time; the second pass brings back the first.
//
// It returns the segment vectors to store (those it gave one), the time in the
// model and the message vectors stored.
func (j *Job) pool(ctx context.Context, vs []sqlite.SegmentVector, passages []passage) ([]sqlite.SegmentVector, time.Duration, int, error) {
	var ids []int64
	for _, p := range passages {
		ids = append(ids, p.ids...)
	}
	known, err := j.DB.MessageVectors(ctx, ids, j.Embedder.Dim())
	if err != nil {
		return nil, 0, 0, err
	}
	// The messages without a vector, each once.
	var todo []sqlite.MessageVector
	var texts []string
	var at []int // texts[k] is todo[at[k]]'s
	seen := map[int64]bool{}
	for _, p := range passages {
		for k, id := range p.ids {
			if _, ok := known[id]; ok || seen[id] {
				continue
			}
			seen[id] = true
			todo = append(todo, sqlite.MessageVector{ID: id, Content: p.raw[k]})
			if utf8.RuneCountInString(p.parts[k]) >= MinMessageChars {
				texts = append(texts, p.parts[k])
				at = append(at, len(todo)-1)
			}
		}
	}
	emb := j.Embedder
	if j.MessageEmbedder != nil {
		emb = j.MessageEmbedder
	}
	fresh := map[int64]bool{} // embedded now by the segments' own weights
	infer, err := embedWith(ctx, emb, texts, func(k int, v []float32) {
		todo[at[k]].Vector = v
		known[todo[at[k]].ID] = v
		fresh[todo[at[k]].ID] = j.MessageEmbedder == nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	saved := 0
	if len(todo) > 0 {
		if saved, err = j.DB.SaveMessageVectors(ctx, todo); err != nil {
			return nil, 0, 0, err
		}
	}
	final := map[int]bool{} // segments whose text is one message embedded now
	for _, p := range passages {
		if v := mean(p, known); v != nil {
			p.set(v)
		}
		if p.window == 0 && len(p.ids) == 1 && fresh[p.ids[0]] {
			final[p.seg] = true
		}
	}
	// Only segments whose every passage has a mean are stored; the others
	// wait for the pass over texts, as do those too short to embed (no
	// passage), which that pass stores without a vector.
	var kept []sqlite.SegmentVector
	for i, v := range vs {
		ok := v.Vector != nil && !v.WindowsOnly
		for _, w := range v.Windows {
			ok = ok && w.Vector != nil
		}
		if ok {
			v.Pooled = !final[i] || len(v.Windows) > 0
			kept = append(kept, v)
		}
	}
	return kept, infer, saved, nil
}

// mean is the unit mean of the vectors of p's messages that the model
// would read, each weighted by its tokens; nil if none has a vector.
func mean(p passage, vectors map[int64][]float32) []float32 {
	var sum []float64
	used := 0
	for k, id := range p.ids {
		w := 1.0
		if p.tokens != nil {
			n := p.tokens[k] + 1 // and the separator
			if k > 0 && used+n > p.limit {
				break // the model cuts the text here
			}
			used += n
			w = float64(p.tokens[k])
		}
		v := vectors[id]
		if v == nil {
			continue
		}
		if sum == nil {
			sum = make([]float64, len(v))
		}
		for d, x := range v {
			sum[d] += w * float64(x)
		}
	}
	var norm float64
	for _, x := range sum {
		norm += x * x
	}
	if norm == 0 {
		return nil
	}
	norm = math.Sqrt(norm)
	out := make([]float32, len(sum))
	for d, x := range sum {
		out[d] = float32(x / norm)
	}
	return out
}
