package lexical

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokens calls fn for each token FTS5's text column holds for text, as
// the in-memory index sees it: runs of letters and digits, lower-cased,
// Latin diacritics removed (FTS5's remove_diacritics), a CJK run split
// from the letters beside it (as Terms splits a query).
func Tokens(text string, fn func(tok string, cjk bool)) {
	start, cjk := -1, false
	emit := func(end int) {
		if start >= 0 {
			fn(fold(text[start:end], cjk), cjk)
		}
		start = -1
	}
	for i, r := range text {
		switch {
		case isCJK(r):
			if start >= 0 && !cjk {
				emit(i)
			}
			if start < 0 {
				start, cjk = i, true
			}
		case isWordRune(r):
			if start >= 0 && cjk {
				emit(i)
			}
			if start < 0 {
				start, cjk = i, false
			}
		default:
			emit(i)
		}
	}
	emit(len(text))
}

// fold lower-cases a token and strips the diacritics of non-CJK letters
// (café → cafe), leaving ASCII untouched at no cost.
func fold(tok string, cjk bool) string {
	ascii := true
	for i := 0; i < len(tok); i++ {
		if tok[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(tok)
	}
	tok = strings.ToLower(tok)
	if cjk {
		return tok
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(tok) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// FoldTerm is a query term as the in-memory index stores it.
func FoldTerm(t Term) string { return fold(t.Text, t.CJK) }
