// Package lexical prepares text for SQLite FTS5 keyword search in Korean
// and English.
//
// FTS5's unicode61 tokenizer keeps a run of Hangul as one token, so the
// two-syllable word 학교 never matches the word form 학교에 (most Korean
// words are two syllables and carry particles), and the trigram tokenizer
// cannot match anything under three characters. So each message is
// indexed twice: its text under unicode61 (English words, identifiers,
// numbers), and the overlapping bigrams of every Hangul/CJK run (학교에 →
// 학교 교에). A Korean query word becomes a phrase of its bigrams, which
// matches exactly the texts that contain it.
package lexical

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQueryTokens bounds a query, as Slackquery does.
const MaxQueryTokens = 64

// MaxQueryBytes caps the query text before tokenizing.
const MaxQueryBytes = 1024

// isCJK reports whether r is written without spaces between words:
// Hangul, Han, Kana.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Hangul, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

// isWordRune is what unicode61 keeps in a token.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// Bigrams returns the text for the bigram column: for each run of CJK
// characters, its overlapping bigrams (a lone character stands alone),
// space separated.
func Bigrams(text string) string {
	var b strings.Builder
	var run []rune
	flush := func() {
		switch {
		case len(run) == 1:
			b.WriteString(string(run))
			b.WriteByte(' ')
		case len(run) > 1:
			for i := 0; i+1 < len(run); i++ {
				b.WriteString(string(run[i : i+2]))
				b.WriteByte(' ')
			}
		}
		run = run[:0]
	}
	for _, r := range text {
		if isCJK(r) {
			run = append(run, unicode.ToLower(r))
		} else {
			flush()
		}
	}
	flush()
	return strings.TrimSpace(b.String())
}

// Term is one query word: Words are matched against the text column,
// a CJK run against the bigram column as a phrase.
type Term struct {
	Text string // as the user wrote it (lower-cased)
	CJK  bool
}

// Terms splits a query into terms the way the index sees text: runs of
// letters and digits; a CJK run is its own term. Duplicates are dropped
// and at most MaxQueryTokens kept.
func Terms(q string) []Term {
	if len(q) > MaxQueryBytes {
		q = q[:MaxQueryBytes]
	}
	var out []Term
	seen := map[Term]bool{}
	EachTerm(q, func(t Term) {
		if !seen[t] && len(out) < MaxQueryTokens {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

// EachTerm calls fn for every term of text, split as Terms splits a
// query, in order, repeats included and without Terms' limits: a
// message's words, however long it is.
func EachTerm(text string, fn func(Term)) {
	var cur []rune
	var curCJK bool
	flush := func() {
		if len(cur) > 0 {
			fn(Term{Text: strings.ToLower(string(cur)), CJK: curCJK})
		}
		cur = cur[:0]
	}
	for _, r := range text {
		switch {
		case isCJK(r):
			if !curCJK {
				flush()
			}
			curCJK = true
			cur = append(cur, r)
		case isWordRune(r):
			if curCJK {
				flush()
			}
			curCJK = false
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
}

// MatchExpr builds an FTS5 MATCH expression that finds texts holding any
// of the terms (OR; BM25 ranks texts with more of them first). Every term
// is a quoted string, so no user input is ever read as FTS5 syntax. It
// returns "" when there is nothing to search for.
func MatchExpr(terms []Term) string { return join(terms, " OR ") }

// AllExpr is like MatchExpr but requires every term (AND).
func AllExpr(terms []Term) string { return join(terms, " AND ") }

func join(terms []Term, op string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		switch {
		case t.CJK && utf8.RuneCountInString(t.Text) == 1:
			// One syllable: it stands alone, or begins a bigram (집 in
			// 집에, 집이); a bigram that ends with it (우리집) is missed.
			parts[i] = "bigrams : " + quote(t.Text) + " *"
		case t.CJK:
			parts[i] = "bigrams : " + quote(Bigrams(t.Text))
		default:
			// The forms of an English word (thread: threads, threading,
			// threaded), as the in-memory index folds them (stem).
			forms := Forms(t.Text)
			for j, f := range forms {
				forms[j] = "text : " + quote(f)
			}
			parts[i] = strings.Join(forms, " OR ")
			if len(forms) > 1 {
				parts[i] = "(" + parts[i] + ")"
			}
		}
	}
	return strings.Join(parts, op)
}

// quote makes an FTS5 string: a phrase of the tokens inside, with any
// double quote doubled.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// Contains reports whether text contains the term: for a CJK term, as a
// substring (the index finds a one-syllable term only where it stands
// alone or begins a pair); for a word, as a whole token in any of its
// inflections (stem).
func Contains(text string, t Term) bool {
	lower := strings.ToLower(text)
	if t.CJK {
		return strings.Contains(lower, t.Text)
	}
	want := fold(t.Text, false)
	for _, w := range Terms(lower) {
		if !w.CJK && fold(w.Text, false) == want {
			return true
		}
	}
	return false
}
