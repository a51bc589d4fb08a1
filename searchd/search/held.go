package search

// TopicWordsHeld is, for each word of text that says what it is about
// (topicTerms: not stop words, question words, numbers or dates), which
// of texts hold it, matched as support matches a query's words (holding:
// moved holds move, 이사를 holds 이사). A summary's sentence is checked
// with it against the results it cites.
func TopicWordsHeld(text string, texts []string) [][]bool {
	terms := topicTerms(text)
	out := make([][]bool, len(terms))
	for i := range out {
		out[i] = make([]bool, len(texts))
	}
	for j, t := range texts {
		held, _ := holding(terms, []string{t})
		for i, n := range held {
			out[i][j] = n > 0
		}
	}
	return out
}
