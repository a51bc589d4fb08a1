// Package unigram is a SentencePiece Unigram tokenizer read from a Hugging
// Face tokenizer.json of XLM-RoBERTa's shape (multilingual-e5, bge-m3),
// giving the ids the tokenizers library gives.
//
// It exists for memory: the Rust library holds a 250,002-piece vocabulary
// in about 296 MiB, and keeps it after it is freed; this holds it in about
// 20 MiB. Shapes it does not implement are refused with ErrUnsupported, and
// the caller keeps the library's tokenizer.
package unigram

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrUnsupported marks a tokenizer.json this package does not implement.
var ErrUnsupported = errors.New("tokenizer not implemented in Go")

// Tokenizer is safe for concurrent use.
type Tokenizer struct {
	ids      map[string]int32 // piece → id
	pieces   []string         // by id
	scores   []float64        // by id
	maxPiece int              // longest piece, in bytes
	unk      int32
	unkScore float64

	added []added // split out of the raw text first

	precompiled    *Precompiled // nil: none
	collapseSpaces bool         // Replace " {2,}" → " "

	bos, eos  int32 // around every sequence
	maxTokens int   // truncation, special tokens included; 0: none
}

type added struct {
	content        string
	id             int32
	lstrip, rstrip bool
}

// Parse reads tokenizer.json. An error wrapping ErrUnsupported means the
// file is valid but of a shape this package does not implement.
func Parse(b []byte) (*Tokenizer, error) {
	var f struct {
		AddedTokens []struct {
			ID         int32  `json:"id"`
			Content    string `json:"content"`
			SingleWord bool   `json:"single_word"`
			LStrip     bool   `json:"lstrip"`
			RStrip     bool   `json:"rstrip"`
			Normalized bool   `json:"normalized"`
			Special    bool   `json:"special"`
		} `json:"added_tokens"`
		Normalizer    json.RawMessage `json:"normalizer"`
		PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
		PostProcessor json.RawMessage `json:"post_processor"`
		Truncation    *struct {
			MaxLength int    `json:"max_length"`
			Direction string `json:"direction"`
			Stride    int    `json:"stride"`
		} `json:"truncation"`
		Padding json.RawMessage `json:"padding"`
		Model   struct {
			Type         string          `json:"type"`
			UnkID        *int32          `json:"unk_id"`
			Vocab        json.RawMessage `json:"vocab"`
			ByteFallback bool            `json:"byte_fallback"`
		} `json:"model"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	unsupported := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
	}
	m := f.Model
	if m.Type != "Unigram" {
		return nil, unsupported("model %q", m.Type)
	}
	if m.ByteFallback {
		return nil, unsupported("byte fallback")
	}
	var vocab [][2]any
	if err := json.Unmarshal(m.Vocab, &vocab); err != nil {
		return nil, fmt.Errorf("tokenizer.json: vocab: %w", err)
	}
	if m.UnkID == nil || *m.UnkID < 0 || int(*m.UnkID) >= len(vocab) {
		return nil, unsupported("no unknown-token id")
	}
	t := &Tokenizer{ids: make(map[string]int32, len(vocab)), pieces: make([]string, len(vocab)), scores: make([]float64, len(vocab)), unk: *m.UnkID}
	minScore := math.Inf(1)
	for i, e := range vocab {
		piece, ok1 := e[0].(string)
		score, ok2 := e[1].(float64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("tokenizer.json: vocabulary entry %d is not [piece, score]", i)
		}
		t.ids[piece] = int32(i) // a repeated piece: the last id, as the library
		t.pieces[i] = piece
		t.scores[i] = score
		t.maxPiece = max(t.maxPiece, len(piece))
		minScore = min(minScore, score)
	}
	t.unkScore = minScore - 10 // the library's kUnkPenalty

	for _, a := range f.AddedTokens {
		if !a.Special || a.Normalized || a.SingleWord || a.Content == "" {
			return nil, unsupported("added token %q of a kind not implemented", a.Content)
		}
		t.added = append(t.added, added{a.Content, a.ID, a.LStrip, a.RStrip})
	}
	if err := t.parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	var pre struct {
		Type           string `json:"type"`
		Replacement    string `json:"replacement"`
		PrependScheme  string `json:"prepend_scheme"`
		AddPrefixSpace *bool  `json:"add_prefix_space"`
		Split          *bool  `json:"split"`
	}
	if err := json.Unmarshal(f.PreTokenizer, &pre); err != nil || pre.Type != "Metaspace" || pre.Replacement != "▁" ||
		!(pre.PrependScheme == "always" || pre.PrependScheme == "" && (pre.AddPrefixSpace == nil || *pre.AddPrefixSpace)) ||
		pre.Split != nil && !*pre.Split {
		return nil, unsupported("pre-tokenizer %s", f.PreTokenizer)
	}
	if err := t.parsePostProcessor(f.PostProcessor); err != nil {
		return nil, err
	}
	if tr := f.Truncation; tr != nil {
		if tr.Direction != "Right" || tr.Stride != 0 || tr.MaxLength < 3 {
			return nil, unsupported("truncation")
		}
		t.maxTokens = tr.MaxLength
	}
	if len(f.Padding) > 0 && string(f.Padding) != "null" {
		return nil, unsupported("fixed padding")
	}
	return t, nil
}

func (t *Tokenizer) parseNormalizer(raw json.RawMessage) error {
	type norm struct {
		Type        string            `json:"type"`
		Normalizers []json.RawMessage `json:"normalizers"`
		Charsmap    string            `json:"precompiled_charsmap"`
		Pattern     struct {
			Regex *string `json:"Regex"`
		} `json:"pattern"`
		Content string `json:"content"`
	}
	var n norm
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("tokenizer.json: normalizer: %w", err)
	}
	steps := []json.RawMessage{raw}
	if n.Type == "Sequence" {
		steps = n.Normalizers
	}
	// Precompiled, then the space collapse: each at most once, in that
	// order (what XLM-RoBERTa's converter writes).
	for i, s := range steps {
		var n norm
		if err := json.Unmarshal(s, &n); err != nil {
			return fmt.Errorf("tokenizer.json: normalizer: %w", err)
		}
		switch {
		case n.Type == "Precompiled" && i == 0:
			b, err := base64.StdEncoding.DecodeString(n.Charsmap)
			if err != nil {
				return fmt.Errorf("tokenizer.json: precompiled_charsmap: %w", err)
			}
			if len(b) == 0 {
				continue // the library treats an empty map as none
			}
			if t.precompiled, err = ParsePrecompiled(b); err != nil {
				return fmt.Errorf("tokenizer.json: %w", err)
			}
		case n.Type == "Replace" && n.Pattern.Regex != nil && *n.Pattern.Regex == " {2,}" && n.Content == " " && i == len(steps)-1:
			t.collapseSpaces = true
		default:
			return fmt.Errorf("%w: normalizer %s", ErrUnsupported, s)
		}
	}
	return nil
}

// parsePostProcessor accepts "<s> $A </s>" as TemplateProcessing or
// RobertaProcessing writes it.
func (t *Tokenizer) parsePostProcessor(raw json.RawMessage) error {
	var p struct {
		Type   string `json:"type"`
		Single []struct {
			SpecialToken *struct{ ID string } `json:"SpecialToken"`
			Sequence     *struct{ ID string } `json:"Sequence"`
		} `json:"single"`
		SpecialTokens map[string]struct {
			IDs []int32 `json:"ids"`
		} `json:"special_tokens"`
		CLS [2]any `json:"cls"`
		SEP [2]any `json:"sep"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("tokenizer.json: post_processor: %w", err)
	}
	unsupported := fmt.Errorf("%w: post-processor %s", ErrUnsupported, raw)
	switch p.Type {
	case "TemplateProcessing":
		s := p.Single
		if len(s) != 3 || s[0].SpecialToken == nil || s[1].Sequence == nil || s[1].Sequence.ID != "A" || s[2].SpecialToken == nil {
			return unsupported
		}
		bos, eos := p.SpecialTokens[s[0].SpecialToken.ID].IDs, p.SpecialTokens[s[2].SpecialToken.ID].IDs
		if len(bos) != 1 || len(eos) != 1 {
			return unsupported
		}
		t.bos, t.eos = bos[0], eos[0]
	case "RobertaProcessing":
		cls, ok1 := p.CLS[1].(float64)
		sep, ok2 := p.SEP[1].(float64)
		if !ok1 || !ok2 {
			return unsupported
		}
		t.bos, t.eos = int32(cls), int32(sep)
	default:
		return unsupported
	}
	for _, id := range []int32{t.bos, t.eos} {
		if id < 0 || int(id) >= len(t.scores) {
			return fmt.Errorf("tokenizer.json: special token id %d outside the vocabulary", id)
		}
	}
	return nil
}

// Encode returns text's ids: <s>, the pieces, </s>, at most maxTokens in
// all (the file's truncation applies too; 0: no limit of the caller's).
func (t *Tokenizer) Encode(text string, maxTokens int) []uint32 {
	limit := t.maxTokens
	if maxTokens > 0 && (limit == 0 || maxTokens < limit) {
		limit = maxTokens
	}
	ids := []uint32{uint32(t.bos)}
	for _, part := range t.splitAdded(text) {
		if part.id >= 0 {
			ids = append(ids, uint32(part.id))
			continue
		}
		ids = t.appendPieces(ids, part.text)
		if limit > 0 && len(ids) >= limit-1 {
			break // the rest is cut anyway
		}
	}
	if limit > 0 && len(ids) > limit-1 {
		ids = ids[:limit-1]
	}
	return append(ids, uint32(t.eos))
}

// Pieces returns the pieces Encode gives text, as text ("▁" marking a
// word's start), without <s> and </s>; an unknown character or an added
// (special) token is "": it holds nothing the model learned as text.
func (t *Tokenizer) Pieces(text string) []string {
	ids := t.Encode(text, 0)
	ids = ids[1 : len(ids)-1]
	out := make([]string, len(ids))
	for i, id := range ids {
		if int32(id) != t.unk && !t.isAdded(int32(id)) {
			out[i] = t.pieces[id]
		}
	}
	return out
}

// Vocabulary is the pieces by id; callers must not change it.
func (t *Tokenizer) Vocabulary() []string { return t.pieces }

func (t *Tokenizer) isAdded(id int32) bool {
	for _, a := range t.added {
		if a.id == id {
			return true
		}
	}
	return false
}

type part struct {
	text string
	id   int32 // an added token's, or −1
}

// splitAdded splits the raw text on the added (special) tokens, leftmost
// longest first, as the library does before normalizing.
func (t *Tokenizer) splitAdded(text string) []part {
	var parts []part
	last := 0 // end of the previous match
	for i := 0; i < len(text); {
		best := -1
		for j, a := range t.added {
			if strings.HasPrefix(text[i:], a.content) && (best < 0 || len(a.content) > len(t.added[best].content)) {
				best = j
			}
		}
		if best < 0 {
			i++
			continue
		}
		a := t.added[best]
		start, end := i, i+len(a.content)
		if a.lstrip {
			start = last + len(strings.TrimRightFunc(text[last:start], unicode.IsSpace))
		}
		if a.rstrip {
			end = len(text) - len(strings.TrimLeftFunc(text[end:], unicode.IsSpace))
		}
		if start > last {
			parts = append(parts, part{text[last:start], -1})
		}
		parts = append(parts, part{text[start:end], a.id})
		last, i = end, end
	}
	if last < len(text) {
		parts = append(parts, part{text[last:], -1})
	}
	return parts
}

// appendPieces normalizes one stretch of text, splits it into words at
// "▁" (Metaspace: spaces become "▁", one is prepended) and appends each
// word's pieces.
func (t *Tokenizer) appendPieces(ids []uint32, text string) []uint32 {
	if t.precompiled != nil {
		text = t.precompiled.Normalize(text)
	}
	if t.collapseSpaces {
		text = collapseSpaces(text)
	}
	if text == "" {
		return ids
	}
	text = strings.ReplaceAll(text, " ", "▁")
	if !strings.HasPrefix(text, "▁") {
		text = "▁" + text
	}
	// Words begin at each "▁" (the library's MergedWithNext split).
	for len(text) > 0 {
		end := strings.Index(text[len("▁"):], "▁")
		if end < 0 {
			end = len(text)
		} else {
			end += len("▁")
		}
		ids = t.appendWord(ids, text[:end])
		text = text[end:]
	}
	return ids
}

func collapseSpaces(s string) string {
	if !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' && i > 0 && s[i-1] == ' ' {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// appendWord is the library's encode_optimized: Viterbi over the pieces
// that start at each character, an unknown character scoring below every
// piece, ties kept by the first (shortest) candidate, runs of unknown
// characters fused into one <unk>.
func (t *Tokenizer) appendWord(ids []uint32, word string) []uint32 {
	type node struct {
		score float64
		from  int // start of the best last piece; −1: unreached
		id    int32
	}
	best := make([]node, len(word)+1)
	for i := range best {
		best[i].from = -1
	}
	for start := 0; start < len(word); {
		_, runeLen := utf8.DecodeRuneInString(word[start:])
		here := best[start].score
		single := false
		for end := start + runeLen; end <= len(word) && end-start <= t.maxPiece; {
			if id, ok := t.ids[word[start:end]]; ok {
				n := &best[end]
				if s := here + t.scores[id]; n.from < 0 || s > n.score {
					*n = node{s, start, id}
				}
				single = single || end-start == runeLen
			}
			if end == len(word) {
				break
			}
			_, n := utf8.DecodeRuneInString(word[end:])
			end += n
		}
		if !single {
			n := &best[start+runeLen]
			if s := here + t.unkScore; n.from < 0 || s > n.score {
				*n = node{s, start, t.unk}
			}
		}
		start += runeLen
	}
	// Back from the end; then reversed.
	from := len(ids)
	unkEnd := -1 // end of a run of unknowns being fused
	for end := len(word); end > 0; {
		n := best[end]
		if n.id == t.unk {
			if unkEnd < 0 {
				unkEnd = end
			}
		} else {
			if unkEnd >= 0 {
				ids = append(ids, t.fused(word[end:unkEnd]))
				unkEnd = -1
			}
			ids = append(ids, uint32(n.id))
		}
		end = n.from
	}
	if unkEnd >= 0 {
		ids = append(ids, t.fused(word[:unkEnd]))
	}
	for i, j := from, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids
}

// fused is the id of a run of unknown characters: the library looks the
// run up as a piece.
func (t *Tokenizer) fused(run string) uint32 {
	if id, ok := t.ids[run]; ok {
		return uint32(id)
	}
	return uint32(t.unk)
}
