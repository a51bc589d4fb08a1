package embed

import (
	"errors"

	"github.com/knights-analytics/hugot/backends"
)

// TokenIDs are the ids the model's tokenizer gives each text (special
// tokens included, truncated at MaxTokens), without running the network.
func (m *Model) TokenIDs(texts []string) ([][]uint32, error) {
	out := make([][]uint32, 0, len(texts))
	for start := 0; start < len(texts); start += maxBatch { // the Go backend's largest batch
		ids, err := m.tokenIDs(texts[start:min(start+maxBatch, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, ids...)
	}
	return out, nil
}

func (m *Model) tokenIDs(texts []string) ([][]uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.session == nil {
		return nil, errors.New("embedding model is closed")
	}
	batch := backends.NewBatch(len(texts))
	defer batch.Destroy()
	if err := m.pipeline.Preprocess(batch, texts); err != nil {
		return nil, err
	}
	out := make([][]uint32, len(texts))
	for i, in := range batch.Input {
		out[i] = append([]uint32(nil), in.TokenIDs...)
	}
	return out, nil
}
