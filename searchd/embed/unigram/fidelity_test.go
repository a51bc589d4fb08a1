//go:build ORT

package unigram_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/daulet/tokenizers"

	"dsearch/searchd/embed/embedtest"
	"dsearch/searchd/embed/unigram"
	"dsearch/searchd/export"
)

// The Go tokenizer against the Rust tokenizers library that hugot would
// load, over every text of the evaluation sets and a set of hard cases:
// the ids must be identical.

var evalDir = filepath.Join("..", "..", "..", "..", "shared", "eval")

// hardCases are inputs where the steps' details show.
var hardCases = []string{
	"", " ", "   ", "a", "  leading and   inner  spaces  ", "tab\there\nnewline\r\nend",
	"<s>", "a<s>b", "x </s> y", "<unk><pad>", "mask <mask> here", "  <mask>", "<mask>  tail", "<s",
	"ｆｕｌｌｗｉｄｔｈ　ＡＳＣＩＩ", "ﬁ ligature", "e\u0301 decomposed é", "Ａ\u0301 ﬁ\u0308 ｶ\u3099", // a mapped character leading a cluster: the whole cluster takes its mapping "한국어 ㅋㅋㅋ ㅇㅇ 가\u11a8",
	"😀👍🏽 family 👨‍👩‍👧 flags 🇰🇷", "\u200bzero\u200dwidth\ufeff", "〜～ wave", "ℌ𝔢𝔩𝔩𝔬 𝕎𝕠𝕣𝕝𝕕",
	"unknown ☃☃☃ runs \U000e0001 \uffff", "中文 日本語 ｶﾀｶﾅ", "العربية עברית", "\x01control\x7f chars", // (no NUL: the library's C binding ends the text there)
	"query: 민수가 이사 간다고 한 게 언제였지?", "passage: 나 다음 달에 이사 가",
	strings.Repeat("긴 문장이 계속 이어집니다. ", 200), strings.Repeat("word ", 600),
}

func evalTexts(t *testing.T) []string {
	var out []string
	files, _ := filepath.Glob(filepath.Join(evalDir, "*", "*.json"))
	for _, f := range files {
		_, msgs, err := export.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range msgs {
			out = append(out, msg.Content)
		}
	}
	queries, _ := filepath.Glob(filepath.Join(evalDir, "*", "queries.jsonl"))
	for _, f := range queries {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var q struct{ Query string }
			if json.Unmarshal([]byte(line), &q) == nil && q.Query != "" {
				out = append(out, "query: "+q.Query)
			}
		}
	}
	return out
}

// compare tokenizes texts both ways and fails on any difference.
func compare(t *testing.T, tokenizerJSON []byte, texts []string) {
	t.Helper()
	ours, err := unigram.Parse(tokenizerJSON)
	if err != nil {
		t.Fatal(err)
	}
	rust, err := tokenizers.FromBytes(tokenizerJSON)
	if err != nil {
		t.Fatal(err)
	}
	defer rust.Close()
	differ := 0
	for _, text := range texts {
		want, _ := rust.Encode(text, true)
		if got := ours.Encode(text, 0); !slices.Equal(got, want) {
			if differ++; differ <= 5 {
				// Ids only: eval texts are real conversations.
				t.Errorf("text %d (%d bytes): got %v\nwant %v", slices.Index(texts, text), len(text), got, want)
			}
		}
	}
	t.Logf("%d texts, %d differ", len(texts), differ)
	if differ > 0 {
		t.Errorf("%d of %d texts tokenized differently from the tokenizers library", differ, len(texts))
	}
}

// TestMatchesLibraryOnModel: the converted multilingual-e5-small (or any
// Unigram model at DSEARCH_TEST_MODEL), every evaluation text.
func TestMatchesLibraryOnModel(t *testing.T) {
	dir := os.Getenv("DSEARCH_TEST_MODEL")
	if dir == "" {
		t.Skip("DSEARCH_TEST_MODEL unset (make test sets it)")
	}
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unigram.Parse(b); err != nil {
		t.Skipf("%s: %v", dir, err)
	}
	if _, err := os.Stat(evalDir); err != nil {
		t.Skipf("no evaluation data (../shared/eval beside the clone): %v", err)
	}
	texts := append(slices.Clone(hardCases), evalTexts(t)...)
	if len(texts) < 10000 {
		t.Fatalf("only %d evaluation texts under %s", len(texts), evalDir)
	}
	compare(t, b, texts)
}

// TestMatchesLibraryOnFixture: the bge-m3-shaped fixture (its <mask>
// strips spaces to its left).
func TestMatchesLibraryOnFixture(t *testing.T) {
	dir := t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{Tokenizer: embedtest.Unigram, Pooling: "cls"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	compare(t, b, hardCases)
}
