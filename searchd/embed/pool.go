package embed

import (
	"fmt"
	"math"
)

// pool reduces one input's model output to a vector. hidden is
// [tokens][dim] (token outputs) and mask the input's attention mask;
// for Pooled, hidden holds the single pooled row.
func pool(p Pooling, hidden [][]float32, mask []uint32) ([]float32, error) {
	if len(hidden) == 0 {
		return nil, fmt.Errorf("empty model output")
	}
	out := make([]float32, len(hidden[0]))
	switch p {
	case CLS, Pooled:
		copy(out, hidden[0])
	case Mean:
		var n float32
		for i, row := range hidden {
			if i < len(mask) && mask[i] != 0 {
				for k, v := range row {
					out[k] += v
				}
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("no tokens under the attention mask")
		}
		for k := range out {
			out[k] /= n
		}
	default:
		return nil, fmt.Errorf("unknown pooling %q", p)
	}
	return out, normalize(out)
}

// normalize scales v to unit length, so cosine similarity is a dot
// product.
func normalize(v []float32) error {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return fmt.Errorf("model produced a zero or invalid vector")
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return nil
}
