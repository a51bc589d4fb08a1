package lexical

import (
	"slices"
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

// fold lower-cases a token, strips the diacritics of non-CJK letters
// (café → cafe), and folds an English word's inflections (threads,
// threading, threaded → thread: stem).
func fold(tok string, cjk bool) string {
	ascii := true
	for i := 0; i < len(tok); i++ {
		if tok[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return stem(strings.ToLower(tok))
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

// stem folds the inflections people type of an English word: the plural
// and third person (-s, -es, -ies), -ing and -ed, by steps 1a to 1c and
// 5a of Porter's stemmer (threads, threading, threaded → thread; replies,
// replied, replying → repli; uses, using, used → use). It stops there: the
// later steps conflate words people mean apart (general, generous). A
// word it does not know as English (digits, under three letters, other
// scripts) is returned as it is.
func stem(w string) string {
	if len(w) < 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	// 1a: plurals. A short word keeps its s (bus, gas, its, ios), and
	// ties stays tie.
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies") && len(w) == 4:
		w = w[:len(w)-1]
	case strings.HasSuffix(w, "ies"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"):
	case strings.HasSuffix(w, "s") && len(w) > 3:
		w = w[:len(w)-1]
	}
	// 1b: -eed, -ed, -ing.
	switch {
	case strings.HasSuffix(w, "eed"):
		if measure(w[:len(w)-3]) > 0 {
			w = w[:len(w)-1]
		}
	case strings.HasSuffix(w, "ed") && hasVowel(w[:len(w)-2]):
		w = undouble(w[:len(w)-2])
	case strings.HasSuffix(w, "ing") && hasVowel(w[:len(w)-3]):
		w = undouble(w[:len(w)-3])
	}
	if len(w) == 2 {
		w += "e" // us(ing) → use, ag(ing) → age: not the word us
	}
	// 1c: a final y after a vowel-bearing stem (reply, replies).
	if strings.HasSuffix(w, "y") && hasVowel(w[:len(w)-1]) {
		w = w[:len(w)-1] + "i"
	}
	// 5a: a final e (create, created), but not of a short word (use).
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		if m := measure(w[:len(w)-1]); m > 1 || m == 1 && !cvc(w[:len(w)-1]) {
			w = w[:len(w)-1]
		}
	}
	return w
}

// undouble is Porter's clean-up after -ed or -ing: hop(p)ing → hop,
// hop(e)ing → hope, conflat(e)ed → conflate.
func undouble(w string) string {
	n := len(w)
	switch {
	case strings.HasSuffix(w, "at") || strings.HasSuffix(w, "bl") || strings.HasSuffix(w, "iz"):
		return w + "e"
	case n >= 2 && w[n-1] == w[n-2] && consonant(w, n-1) && w[n-1] != 'l' && w[n-1] != 's' && w[n-1] != 'z':
		return w[:n-1]
	case measure(w) == 1 && cvc(w):
		return w + "e"
	}
	return w
}

// consonant reports whether w[i] is a consonant in Porter's sense (y
// after a consonant is a vowel).
func consonant(w string, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !consonant(w, i-1)
	}
	return true
}

// measure is Porter's m: the number of vowel-consonant sequences.
func measure(w string) int {
	m, vowel := 0, false
	for i := range len(w) {
		if consonant(w, i) {
			if vowel {
				m++
			}
			vowel = false
		} else {
			vowel = true
		}
	}
	return m
}

func hasVowel(w string) bool {
	for i := range len(w) {
		if !consonant(w, i) {
			return true
		}
	}
	return false
}

// cvc: w ends consonant, vowel, consonant, the last not w, x or y (hop).
func cvc(w string) bool {
	n := len(w)
	return n >= 3 && consonant(w, n-3) && !consonant(w, n-2) && consonant(w, n-1) &&
		w[n-1] != 'w' && w[n-1] != 'x' && w[n-1] != 'y'
}

// Forms lists the words of the same stem a query word may stand for in
// text that is not stemmed (FTS5's text column): the word itself and its
// plural, -ing and -ed forms, each of which stems as it does.
func Forms(word string) []string {
	s := stem(word)
	if s == word && (len(word) < 3 || strings.IndexFunc(word, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0) {
		return []string{word}
	}
	bases := []string{s, s + "e"}
	if strings.HasSuffix(s, "i") {
		bases = append(bases, s[:len(s)-1]+"y")
	}
	if n := len(s); n >= 2 && consonant(s, n-1) {
		bases = append(bases, s+s[n-1:]) // hop → hopp(ing)
	}
	out := []string{word}
	for _, b := range bases {
		for _, f := range []string{b, b + "s", b + "es", b + "ed", b + "d", b + "ing", strings.TrimSuffix(b, "e") + "ing"} {
			if stem(f) == s && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}
