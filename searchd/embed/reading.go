package embed

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// A model cannot have learned words in a script its vocabulary holds no
// words of. BERT's uncased WordPiece (e5-small-v2) decomposes a Hangul
// syllable into its letters (jamo) and has no piece of two of them: 학교
// is ᄒ ##ᅡ ##ᆨ ##ᄀ ##ᅭ, or [UNK] where a jamo is missing; XLM-RoBERTa's
// Unigram (multilingual-e5, bge-m3) has ▁학교. The model's tokenizer, run
// on the query, tells the two apart before the network runs, where the
// cosines do not: an English model's cosines on Korean text stand out
// from their list as much as a multilingual model's.
//
// Reading is that measure: the share of the text's letters that fall in a
// piece holding two or more letters of their script. Letters count
// decomposed (NFD): a Hangul syllable block is the two or three jamo it
// is written with, an accented letter one letter and a mark. A letter in a
// piece of its own, or under the unknown token, is unread. In Han,
// Hiragana and Katakana one symbol is a word or a syllable, and a lone
// one is often a word's piece (で, を, 寿): there a letter in a known
// piece of its own is read too, if the vocabulary holds pieces of two or
// more of that script's symbols (the tokenizer learned words there; a
// lone symbol is its choice, not its fallback). BERT's vocabulary has no
// such piece, XLM-RoBERTa's thousands. Letters of no script of their own
// (Common, Inherited: ー) are not measured; a text without measured
// letters (digits, emoji) reads as 1: nothing says the model cannot read
// it.

// syllabic are the scripts in which one symbol is a syllable or a word.
var syllabic = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana}

// reader measures readings for one tokenizer.
type reader struct {
	// special are the tokens of hugot's tokenizer that stand for no
	// text (special and unknown tokens).
	special map[string]bool
	// words are the syllabic scripts the vocabulary holds pieces of two
	// or more symbols of.
	words map[*unicode.RangeTable]bool
}

func newReader(vocab []string, special map[string]bool) *reader {
	rd := &reader{special: special, words: map[*unicode.RangeTable]bool{}}
	for _, p := range vocab {
		for s, n := range letters(p) {
			if n >= 2 && isSyllabic(s) {
				rd.words[s] = true
			}
		}
	}
	return rd
}

func isSyllabic(s *unicode.RangeTable) bool {
	for _, t := range syllabic {
		if s == t {
			return true
		}
	}
	return false
}

// Reading is the share of text's letters the model's vocabulary reads as
// words or parts of words, from 0 to 1 (see above).
func (m *Model) Reading(text string) (float64, error) {
	pieces, err := m.pieces(text)
	if err != nil {
		return 0, err
	}
	return m.reader.share(text, pieces), nil
}

// pieces tokenizes text (no prefix) and returns its pieces as text,
// special and unknown tokens as "".
func (m *Model) pieces(text string) ([]string, error) {
	if m.unigram != nil {
		return m.unigram.Pieces(text), nil
	}
	in, err := m.tokenize([]string{text})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(in[0].Tokens))
	for i, tok := range in[0].Tokens {
		if i < len(in[0].SpecialTokensMask) && in[0].SpecialTokensMask[i] == 1 || m.reader.special[tok] {
			continue
		}
		out[i] = tok
	}
	return out, nil
}

// wordPieceReader reads the vocabulary and the tokens that stand for no
// text (special added tokens, the unknown token) from dir's tokenizer.json,
// for hugot's tokenizer.
func wordPieceReader(dir string) (*reader, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, err
	}
	var f struct {
		AddedTokens []struct {
			Content string `json:"content"`
			Special bool   `json:"special"`
		} `json:"added_tokens"`
		Model struct {
			UnkToken string          `json:"unk_token"`
			Vocab    json.RawMessage `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("model %s: tokenizer.json: %w", dir, err)
	}
	special := map[string]bool{}
	for _, a := range f.AddedTokens {
		if a.Special {
			special[a.Content] = true
		}
	}
	if f.Model.UnkToken != "" {
		special[f.Model.UnkToken] = true
	}
	var vocab []string
	var ids map[string]int // WordPiece's and BPE's shape
	if json.Unmarshal(f.Model.Vocab, &ids) == nil {
		for p := range ids {
			vocab = append(vocab, p)
		}
	}
	return newReader(vocab, special), nil
}

// share is the reading of text tokenized into pieces ("" for special and
// unknown tokens).
func (rd *reader) share(text string, pieces []string) float64 {
	total := letters(text)
	all := 0
	for _, n := range total {
		all += n
	}
	if all == 0 {
		return 1
	}
	read := map[*unicode.RangeTable]int{}
	for _, p := range pieces {
		// WordPiece marks a word's continuation with "##" (SentencePiece
		// a word's start with "▁", not a letter).
		for s, n := range letters(strings.TrimPrefix(p, "##")) {
			if n >= 2 || rd.words[s] {
				read[s] += n
			}
		}
	}
	done := 0
	for s, n := range read {
		done += min(n, total[s]) // a script's letters are read at most once
	}
	return float64(done) / float64(all)
}

// letters counts s's measured letters by script, decomposed (NFD).
func letters(s string) map[*unicode.RangeTable]int {
	var n map[*unicode.RangeTable]int
	for _, r := range norm.NFD.String(s) {
		if !unicode.IsLetter(r) {
			continue
		}
		if sc := script(r); sc != nil && sc != unicode.Common && sc != unicode.Inherited {
			if n == nil {
				n = map[*unicode.RangeTable]int{}
			}
			n[sc]++
		}
	}
	return n
}

// common are the scripts tried first; script falls back to all of them.
var common = []*unicode.RangeTable{unicode.Latin, unicode.Hangul, unicode.Han, unicode.Hiragana, unicode.Katakana,
	unicode.Cyrillic, unicode.Greek, unicode.Arabic, unicode.Hebrew, unicode.Thai, unicode.Devanagari, unicode.Common}

// script is r's Unicode script, nil if none.
func script(r rune) *unicode.RangeTable {
	for _, t := range common {
		if unicode.Is(t, r) {
			return t
		}
	}
	for _, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return t
		}
	}
	return nil
}
