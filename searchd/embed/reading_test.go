package embed

import (
	"math"
	"testing"
	"unicode"

	"dsearch/searchd/embed/embedtest"
)

// The measure on the tokenizations the two kinds of model give (as their
// tokenizers printed them): e5-small-v2's uncased WordPiece spells Korean
// out in jamo, multilingual-e5's Unigram has pieces of Korean words.
func TestReadShare(t *testing.T) {
	wordPiece := &reader{} // no syllabic script has words in BERT's vocabulary
	unigram := &reader{words: map[*unicode.RangeTable]bool{unicode.Han: true, unicode.Hiragana: true, unicode.Katakana: true}}
	for _, c := range []struct {
		name   string
		rd     *reader
		text   string
		pieces []string
		want   float64
	}{
		{"Korean in jamo", wordPiece, "학교에서 공부", []string{"ᄒ", "##ᅡ", "##ᆨ", "##ᄀ", "##ᅭ", "##ᄋ", "##ᅦ", "##ᄉ", "##ᅥ", "ᄀ", "##ᅩ", "##ᆼ", "##ᄇ", "##ᅮ"}, 0},
		// a particle of one syllable is two or three letters (jamo) of a piece
		{"Korean in words", unigram, "학교에서 공부를", []string{"▁학교", "에서", "▁공부", "를"}, 1},
		// [UNK] ("") reads nothing; what and does are read, ᄒ ##ᅡ … are not
		{"mixed", wordPiece, "what does 학교 mean 둘", []string{"what", "does", "ᄒ", "##ᅡ", "##ᆨ", "##ᄀ", "##ᅭ", "mean", ""}, 12.0 / 20},
		{"English", wordPiece, "When did Caroline go to the LGBTQ support group?",
			[]string{"when", "did", "caroline", "go", "to", "the", "lgbt", "##q", "support", "group", "?"}, 38.0 / 39},
		{"accents stripped", wordPiece, "café naïve", []string{"cafe", "naive"}, 1},
		{"Cyrillic letter by letter", wordPiece, "Привет", []string{"п", "##р", "##и", "##в", "##е", "##т"}, 0},
		// lone kana and ideographs are words where the vocabulary has words of them
		{"Japanese", unigram, "東京で寿司を", []string{"▁", "東京", "で", "寿", "司", "を"}, 1},
		{"Japanese, no words", wordPiece, "東京で寿司を", []string{"東", "京", "て", "", "司", "を"}, 0},
		{"nothing to read", wordPiece, "2023 🙂", []string{"202", "##3", ""}, 1},
		{"a letter read once", unigram, "ab", []string{"▁ab", "ab"}, 1},
	} {
		if got := c.rd.share(c.text, c.pieces); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: reading %.3f, want %.3f", c.name, got, c.want)
		}
	}
}

// A syllabic script has words in a vocabulary with pieces of two or more
// of its symbols.
func TestReaderWords(t *testing.T) {
	rd := newReader([]string{"東", "京", "東京", "て", "を"}, nil)
	if !rd.words[unicode.Han] || rd.words[unicode.Hiragana] {
		t.Errorf("words %v: want Han (東京) and not Hiragana (only lone kana)", rd.words)
	}
}

// Through the model: the fixtures' tokenizers, special tokens and the
// unknown token left out.
func TestReading(t *testing.T) {
	for _, tk := range []embedtest.Tokenizer{embedtest.WordPiece, embedtest.Unigram} {
		dir := t.TempDir()
		if err := embedtest.Write(dir, embedtest.Options{Tokenizer: tk}); err != nil {
			t.Fatal(err)
		}
		for _, opts := range testBackends(t) {
			m, err := Load(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				text string
				want float64
			}{
				{"the boiler broke", 1},
				{"the boiler zzz", 9.0 / 12}, // zzz: [UNK] or <unk>
				{"42", 1},
			} {
				if got, err := m.Reading(c.text); err != nil || math.Abs(got-c.want) > 1e-9 {
					t.Errorf("%s, %s: %q reads %.3f (%v), want %.3f", tk, opts.Backend, c.text, got, err, c.want)
				}
			}
			m.Close()
		}
	}
}
