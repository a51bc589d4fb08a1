package search

import "dsearch/searchd/internal/script"

// Scripts tell a translation from a copy. Closeness measures a result
// against a copy of the query, which shares its script; a result written
// in another script (a Korean answer to an English question) can at best
// be a translation, and a translation comes less close than a copy
// (docs/retrieval.md, "Abstention": Config.TranslationCloseness).

// inOtherScript says whether fewer than half of texts' words are in the
// script most of query's words are in: a text mostly in another writing
// system. A query or texts without letters are not.
func inOtherScript(query string, texts []string) bool {
	want := script.Dominant(script.Words(query))
	if want == script.None {
		return false
	}
	all := 0
	n := script.Words(texts...)
	for _, c := range n {
		all += c
	}
	return all > 0 && 2*n[want] < all
}
