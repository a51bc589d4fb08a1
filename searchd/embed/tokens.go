package embed

// TokenIDs are the ids the model's tokenizer gives each text (special
// tokens included, truncated at MaxTokens), without running the network.
func (m *Model) TokenIDs(texts []string) ([][]uint32, error) {
	inputs, err := m.tokenize(texts)
	if err != nil {
		return nil, err
	}
	out := make([][]uint32, len(inputs))
	for i, in := range inputs {
		out[i] = in.TokenIDs
	}
	return out, nil
}
