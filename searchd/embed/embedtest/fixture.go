// Package embedtest generates a tiny BERT-shaped embedding model at test
// time, so unit tests need no download: an ONNX graph with BERT's inputs
// and a last_hidden_state output, and a WordPiece tokenizer.json. Its word
// vectors cluster by topic, so same-topic sentences embed closer.
package embedtest

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"dsearch/searchd/embed/onnxpb"
)

// Dim is the fixture's vector dimension.
const Dim = 32

// Topics are the fixture's vocabulary: words of one topic share a direction.
var Topics = map[string][]string{
	"heating": strings.Fields("boiler heating heater radiator pipe pipes plumber repair valve pressure 보일러 난방 수리"),
	"games":   strings.Fields("game games play played ending story console steam level boss ranked stranding 게임 엔딩"),
	"moving":  strings.Fields("moving move house apartment rent lease landlord boxes movers 이사 집 전세"),
	"thesis":  strings.Fields("thesis professor paper defense research chapter advisor 논문 교수님 심사"),
	"food":    strings.Fields("pizza chicken beer dinner lunch coffee restaurant 치킨 맥주 점심"),
}

var stopwords = strings.Fields("the a an is was my our i we it this that and at to of last night broke finished " +
	"about for in on with you he she they been have has had did do new old so very just")

// Options choose the fixture's shape.
type Options struct {
	// Pooled adds a second output, sentence_embedding [batch, dim], the
	// mean of the masked token vectors, as exports of bge-m3 with a pooled
	// dense output have; the config then selects it by name.
	Pooled bool
	// MaxTokens for the config (default 64).
	MaxTokens int
	// Name for the config (default "embedtest").
	Name string
}

// Write writes model.onnx, tokenizer.json and dsearch-model.json into dir.
func Write(dir string, o Options) error {
	if o.MaxTokens == 0 {
		o.MaxTokens = 64
	}
	if o.Name == "" {
		o.Name = "embedtest"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	vocab, vectors := vocabulary()
	if err := os.WriteFile(filepath.Join(dir, "model.onnx"), graph(vectors, len(vocab), o.Pooled), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tokenizerJSON(vocab, o.MaxTokens), 0o644); err != nil {
		return err
	}
	cfg := map[string]any{"name": o.Name, "dimension": Dim, "pooling": "mean", "max_tokens": o.MaxTokens}
	if o.Pooled {
		cfg["pooling"], cfg["output"] = "pooled", "sentence_embedding"
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return os.WriteFile(filepath.Join(dir, "dsearch-model.json"), b, 0o644)
}

// vocabulary returns the token list (special tokens first) and the
// embedding matrix, row per token.
func vocabulary() ([]string, []float32) {
	r := rand.New(rand.NewPCG(7, 11))
	noise := func(v []float32, scale float32) {
		for i := range v {
			v[i] += scale * float32(r.NormFloat64())
		}
	}
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	vectors := make([]float32, 0, 256*Dim)
	for range vocab {
		v := make([]float32, Dim)
		if len(vectors) > 0 { // [PAD] stays zero
			noise(v, 0.05)
		}
		vectors = append(vectors, v...)
	}
	names := []string{"heating", "games", "moving", "thesis", "food"} // fixed order: deterministic
	for _, topic := range names {
		dir := make([]float32, Dim)
		noise(dir, 1)
		for _, w := range Topics[topic] {
			v := make([]float32, Dim)
			for i := range v {
				v[i] = 2 * dir[i]
			}
			noise(v, 0.5)
			vocab = append(vocab, w)
			vectors = append(vectors, v...)
		}
	}
	for _, w := range stopwords {
		v := make([]float32, Dim)
		noise(v, 0.3)
		vocab = append(vocab, w)
		vectors = append(vectors, v...)
	}
	return vocab, vectors
}

// graph builds: hidden = Gather(E, input_ids) · mask + 0 · token_type_ids,
// so padding contributes nothing and every BERT input is consumed.
func graph(vectors []float32, vocabSize int, pooled bool) []byte {
	var g onnxpb.Message
	nodes := []onnxpb.Message{
		onnxpb.Node("Gather", "embed", []string{"E", "input_ids"}, []string{"tok"}, onnxpb.IntAttr("axis", 0)),
		onnxpb.Node("Cast", "mask_f", []string{"attention_mask"}, []string{"mask_f"}, onnxpb.IntAttr("to", onnxpb.Float)),
		onnxpb.Node("Unsqueeze", "mask_u", []string{"mask_f", "axes2"}, []string{"mask_u"}),
		onnxpb.Node("Mul", "masked", []string{"tok", "mask_u"}, []string{"masked"}),
		onnxpb.Node("Cast", "type_f", []string{"token_type_ids"}, []string{"type_f"}, onnxpb.IntAttr("to", onnxpb.Float)),
		onnxpb.Node("Unsqueeze", "type_u", []string{"type_f", "axes2"}, []string{"type_u"}),
		onnxpb.Node("Mul", "type_zero", []string{"type_u", "zero"}, []string{"type_zero"}),
		onnxpb.Node("Add", "hidden", []string{"masked", "type_zero"}, []string{"last_hidden_state"}),
	}
	if pooled {
		nodes = append(nodes, onnxpb.Node("ReduceMean", "pool", []string{"masked"}, []string{"sentence_embedding"}, onnxpb.IntsAttr("axes", 1), onnxpb.IntAttr("keepdims", 0)))
	}
	for _, n := range nodes {
		g = g.Sub(1, n)
	}
	g = g.Str(2, "embedtest")
	g = g.Sub(5, onnxpb.FloatTensor("E", []int64{int64(vocabSize), Dim}, vectors))
	g = g.Sub(5, onnxpb.Int64Tensor("axes2", []int64{1}, []int64{2}))
	g = g.Sub(5, onnxpb.FloatTensor("zero", []int64{1}, []float32{0}))
	for _, in := range []string{"input_ids", "attention_mask", "token_type_ids"} {
		g = g.Sub(11, onnxpb.ValueInfo(in, onnxpb.Int64, "batch", "sequence"))
	}
	g = g.Sub(12, onnxpb.ValueInfo("last_hidden_state", onnxpb.Float, "batch", "sequence", Dim))
	if pooled {
		g = g.Sub(12, onnxpb.ValueInfo("sentence_embedding", onnxpb.Float, "batch", Dim))
	}
	return onnxpb.Model("dsearch-embedtest", g, onnxpb.Opset{Version: 13})
}

func tokenizerJSON(vocab []string, maxTokens int) []byte {
	ids := map[string]int{}
	for i, w := range vocab {
		ids[w] = i
	}
	special := func(tok string) map[string]any {
		return map[string]any{"id": ids[tok], "content": tok, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
	}
	seq := func(id string, typ int) map[string]any {
		return map[string]any{"Sequence": map[string]any{"id": id, "type_id": typ}}
	}
	tok := func(id string, typ int) map[string]any {
		return map[string]any{"SpecialToken": map[string]any{"id": id, "type_id": typ}}
	}
	t := map[string]any{
		"version":       "1.0",
		"truncation":    map[string]any{"direction": "Right", "max_length": maxTokens, "strategy": "LongestFirst", "stride": 0},
		"padding":       nil,
		"added_tokens":  []any{special("[PAD]"), special("[UNK]"), special("[CLS]"), special("[SEP]"), special("[MASK]")},
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{
			"type":   "TemplateProcessing",
			"single": []any{tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0)},
			"pair":   []any{tok("[CLS]", 0), seq("A", 0), tok("[SEP]", 0), seq("B", 1), tok("[SEP]", 1)},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{ids["[CLS]"]}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{ids["[SEP]"]}, "tokens": []string{"[SEP]"}},
			},
		},
		"decoder": map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": ids},
	}
	b, _ := json.Marshal(t)
	return b
}
