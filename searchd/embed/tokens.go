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

// PassageTokens is how many tokens each text takes as part of a passage
// (special tokens and the passage prefix not counted; at most MaxTokens),
// and how many one passage holds: what segment windows are cut by.
func (m *Model) PassageTokens(texts []string) (counts []int, limit int, err error) {
	ids, err := m.TokenIDs(append([]string{m.cfg.PassagePrefix}, texts...))
	if err != nil {
		return nil, 0, err
	}
	counts = make([]int, len(texts))
	for i, t := range ids[1:] {
		counts[i] = len(t) - 2
	}
	return counts, m.cfg.MaxTokens - len(ids[0]), nil
}
