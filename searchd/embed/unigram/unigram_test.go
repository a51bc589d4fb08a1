package unigram

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

// tokenizerJSON is a tiny tokenizer.json of XLM-RoBERTa's shape.
func tokenizerJSON(t *testing.T, vocab [][2]any, change func(map[string]any)) []byte {
	t.Helper()
	special := func(id int, content string, lstrip bool) map[string]any {
		return map[string]any{"id": id, "content": content, "special": true, "normalized": false, "lstrip": lstrip}
	}
	f := map[string]any{
		"added_tokens": []any{special(0, "<s>", false), special(2, "</s>", false), special(3, "<unk>", false), special(4, "<mask>", true)},
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " {2,}"}, "content": " "}}},
		"pre_tokenizer":  map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true},
		"post_processor": map[string]any{"type": "RobertaProcessing", "cls": []any{"<s>", 0}, "sep": []any{"</s>", 2}},
		"truncation":     map[string]any{"direction": "Right", "max_length": 8, "stride": 0},
		"model":          map[string]any{"type": "Unigram", "unk_id": 3, "vocab": vocab},
	}
	if change != nil {
		change(f)
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var tinyVocab = [][2]any{
	{"<s>", 0.0}, {"<pad>", 0.0}, {"</s>", 0.0}, {"<unk>", 0.0}, {"<mask>", 0.0},
	{"▁", -2.0}, {"▁a", -1.0}, {"b", -1.0}, {"▁ab", -3.0}, {"c", -5.0}, {"▁abc", -9.0}, {"x", -1.0},
}

func TestEncode(t *testing.T) {
	tk, err := Parse(tokenizerJSON(t, tinyVocab, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want []uint32
	}{
		{"", []uint32{0, 2}},
		{"ab", []uint32{0, 6, 7, 2}},                        // ▁a + b (−2) beats ▁ab (−3)
		{"abc", []uint32{0, 6, 7, 9, 2}},                    // −7 beats ▁abc (−9)
		{"a  ab", []uint32{0, 6, 6, 7, 2}},                  // spaces collapsed, a word per "▁"
		{"☃☃x", []uint32{0, 5, 3, 11, 2}},                   // unknown characters fused into one <unk>
		{"a <mask>", []uint32{0, 6, 4, 2}},                  // <mask> takes the space before it
		{"a<s>a", []uint32{0, 6, 0, 6, 2}},                  // added tokens split the raw text
		{"a a a a a a a", []uint32{0, 6, 6, 6, 6, 6, 6, 2}}, // truncated at 8, </s> kept
	} {
		if got := tk.Encode(c.text, 0); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.text, got, c.want)
		}
	}
	if got := tk.Encode("a a a a", 4); !slices.Equal(got, []uint32{0, 6, 6, 2}) {
		t.Errorf("a caller's limit below the file's: %v", got)
	}
}

func TestParseRefusesOtherShapes(t *testing.T) {
	for name, change := range map[string]func(map[string]any){
		"WordPiece": func(f map[string]any) {
			f["model"] = map[string]any{"type": "WordPiece", "vocab": map[string]int{"a": 0}}
		},
		"lowercase":  func(f map[string]any) { f["normalizer"] = map[string]any{"type": "Lowercase"} },
		"whitespace": func(f map[string]any) { f["pre_tokenizer"] = map[string]any{"type": "Whitespace"} },
		"padding":    func(f map[string]any) { f["padding"] = map[string]any{"strategy": "Fixed"} },
		"pair only":  func(f map[string]any) { f["post_processor"] = map[string]any{"type": "BertProcessing"} },
	} {
		if _, err := Parse(tokenizerJSON(t, tinyVocab, change)); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
	if _, err := Parse([]byte(`{"model": `)); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("truncated file: %v, want a parse error", err)
	}
}

func TestPieces(t *testing.T) {
	tk, err := Parse(tokenizerJSON(t, tinyVocab, nil))
	if err != nil {
		t.Fatal(err)
	}
	// unknown characters and added tokens hold no text of the model's
	if got, want := tk.Pieces("ab ☃☃x <mask>"), []string{"▁a", "b", "▁", "", "x", ""}; !slices.Equal(got, want) {
		t.Errorf("pieces %q, want %q", got, want)
	}
}
