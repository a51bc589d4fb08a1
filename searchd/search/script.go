package search

import (
	"unicode"
	"unicode/utf8"
)

// Scripts tell a translation from a copy. Closeness measures a result
// against a copy of the query, which shares its script; a result written
// in another script (a Korean answer to an English question) can at best
// be a translation, and a translation comes less close than a copy
// (docs/retrieval.md, "Abstention": Config.TranslationCloseness).

// scripts are the writing systems told apart (Latin first: scriptCounts
// tells ASCII letters itself); a letter in none of them is not counted.
var scripts = []*unicode.RangeTable{
	unicode.Latin, unicode.Hangul, unicode.Han, unicode.Hiragana, unicode.Katakana,
	unicode.Cyrillic, unicode.Greek, unicode.Arabic, unicode.Hebrew, unicode.Thai, unicode.Devanagari,
}

// scriptCounts counts the words of texts by script (scripts' order): runs
// of letters of one script, as a Korean syllable holds what two or three
// Latin letters do ("Pokemon 새 게임 누가 샀어?" is Korean).
func scriptCounts(texts ...string) []int {
	counts := make([]int, len(scripts))
	for _, t := range texts {
		last := -1 // the script of the letter before, -1 after any other rune
		for _, r := range t {
			at := -1
			if r < utf8.RuneSelf {
				if 'a' <= r|0x20 && r|0x20 <= 'z' {
					at = 0 // Latin, the common case
				}
			} else if unicode.IsLetter(r) {
				for i, s := range scripts {
					if unicode.Is(s, r) {
						at = i
						break
					}
				}
			}
			if at >= 0 && at != last {
				counts[at]++
			}
			last = at
		}
	}
	return counts
}

// mainScript is the script most of text's words are written in, -1
// when it has none.
func mainScript(text string) int {
	counts := scriptCounts(text)
	best := -1
	for i, n := range counts {
		if n > 0 && (best < 0 || n > counts[best]) {
			best = i
		}
	}
	return best
}

// inOtherScript says whether less than half of texts' words are in
// script (mainScript's index): a text mostly in another writing system.
// Texts without letters, or a script of -1, are not.
func inOtherScript(script int, texts []string) bool {
	if script < 0 {
		return false
	}
	counts := scriptCounts(texts...)
	all := 0
	for _, n := range counts {
		all += n
	}
	return all > 0 && 2*counts[script] < all
}
