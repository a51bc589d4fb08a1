package embed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/knights-analytics/hugot/backends"

	"dsearch/searchd/embed/unigram"
)

// Unigram tokenizers (multilingual-e5, bge-m3) run in Go: the Rust library
// hugot loads holds their 250,002-piece vocabulary in 296 MiB, more than
// half of searchd's memory budget, and gives none of it back when freed.
// The Go tokenizer gives identical ids (unigram's fidelity test) in about
// 20 MiB. Other tokenizers (WordPiece) stay with hugot's.

// loadUnigram returns dir's tokenizer when it is a Unigram tokenizer that
// package unigram implements, else nil.
func loadUnigram(dir string) (*unigram.Tokenizer, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // hugot says what is missing
	}
	if err != nil {
		return nil, err
	}
	tk, err := unigram.Parse(b)
	if errors.Is(err, unigram.ErrUnsupported) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", dir, err)
	}
	return tk, nil
}

// networkView makes a temporary directory of links for hugot to load the
// network from: the files of net (not its subdirectories), its
// tokenizer.json left out, and the tokenizer file given, if any (a
// message model's network lies in a subdirectory without one).
func networkView(net, tokenizer string) (string, error) {
	entries, err := os.ReadDir(net)
	if err != nil {
		return "", err
	}
	view, err := os.MkdirTemp("", "dsearch-model-")
	if err != nil {
		return "", err
	}
	links := map[string]string{}
	for _, e := range entries {
		if e.Name() != "tokenizer.json" && !e.IsDir() {
			links[e.Name()] = filepath.Join(net, e.Name())
		}
	}
	if tokenizer != "" {
		links["tokenizer.json"] = tokenizer
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(view, name)); err != nil {
			os.RemoveAll(view)
			return "", err
		}
	}
	return view, nil
}

// tokenizeUnigram gives what hugot's tokenizer step gives: ids truncated
// at MaxTokens with </s> kept, one type, all attended.
func (m *Model) tokenizeUnigram(texts []string) []backends.TokenizedInput {
	out := make([]backends.TokenizedInput, len(texts))
	for i, text := range texts {
		ids := m.unigram.Encode(text, m.cfg.MaxTokens)
		mask := make([]uint32, len(ids))
		special := make([]uint32, len(ids))
		for j := range mask {
			mask[j] = 1
		}
		special[0], special[len(ids)-1] = 1, 1
		out[i] = backends.TokenizedInput{
			Raw:               text,
			TokenIDs:          ids,
			TypeIDs:           make([]uint32, len(ids)),
			AttentionMask:     mask,
			SpecialTokensMask: special,
			MaxAttentionIndex: len(ids) - 1,
		}
	}
	return out
}
