// Package script tells which writing system text is in: a summary in
// another language than its question (answer's checks), a result that can
// only be a translation of its query (search's confidence).
package script

import (
	"unicode"
	"unicode/utf8"
)

// Script is a writing system; None for a rune that is not a letter.
type Script int

const (
	None Script = iota
	Latin
	Hangul
	Han
	Kana
	Cyrillic
	Other
)

// Of is r's script.
func Of(r rune) Script {
	switch {
	case r < utf8.RuneSelf:
		if 'a' <= r|0x20 && r|0x20 <= 'z' {
			return Latin // the common case, without Unicode's tables
		}
		return None
	case !unicode.IsLetter(r):
		return None
	case unicode.Is(unicode.Hangul, r):
		return Hangul
	case unicode.Is(unicode.Hiragana, r), unicode.Is(unicode.Katakana, r):
		return Kana
	case unicode.Is(unicode.Han, r):
		return Han
	case unicode.Is(unicode.Latin, r):
		return Latin
	case unicode.Is(unicode.Cyrillic, r):
		return Cyrillic
	}
	return Other
}

// Letters counts the letters of each script in text.
func Letters(text string) map[Script]int {
	n := map[Script]int{}
	for _, r := range text {
		if s := Of(r); s != None {
			n[s]++
		}
	}
	return n
}

// Words counts the words of each script in texts: runs of letters of one
// script, as a Korean syllable holds what two or three Latin letters do
// ("Pokemon 새 게임 누가 샀어?" is mostly Korean by words, half Latin by
// letters).
func Words(texts ...string) map[Script]int {
	n := map[Script]int{}
	for _, t := range texts {
		last := None
		for _, r := range t {
			s := Of(r)
			if s != None && s != last {
				n[s]++
			}
			last = s
		}
	}
	return n
}

// Dominant is the script with the most in n (None for none).
func Dominant(n map[Script]int) Script {
	best, most := None, 0
	for s := Latin; s <= Other; s++ {
		if n[s] > most {
			best, most = s, n[s]
		}
	}
	return best
}
