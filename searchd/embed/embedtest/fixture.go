// Package embedtest generates a tiny BERT-shaped embedding model at test
// time, so unit tests need no download: an ONNX graph with BERT's inputs
// and a last_hidden_state output, and a WordPiece tokenizer.json; or, as
// bge-m3 has, XLM-RoBERTa's two inputs and a SentencePiece Unigram
// tokenizer.json, with the sentence vector in the first (CLS) token. Its
// word vectors cluster by topic, so same-topic sentences embed closer.
package embedtest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

// pieces are the Unigram vocabulary's pieces that continue a word (no "▁"):
// the English plural and Korean particles, so that "boilers" is
// ▁boiler + s and "보일러가" ▁보일러 + 가.
var pieces = strings.Fields("s 가 는 를 이 을 에 도")

// Tokenizer is the fixture's tokenizer and the inputs that go with it.
type Tokenizer string

const (
	// WordPiece is BERT's uncased WordPiece ([CLS] ... [SEP]); the graph
	// takes BERT's input_ids, attention_mask and token_type_ids. The
	// default.
	WordPiece Tokenizer = "wordpiece"
	// Unigram is XLM-RoBERTa's SentencePiece Unigram, as bge-m3 has:
	// <s> ... </s>, words start with "▁" (Metaspace), pieces scored by
	// log-probability; the graph takes input_ids and attention_mask only.
	Unigram Tokenizer = "unigram"
)

// The Unigram vocabulary's special pieces, at XLM-RoBERTa's ids.
const (
	BOS = 0 // <s>, the CLS token
	Pad = 1 // <pad>
	EOS = 2 // </s>
	Unk = 3 // <unk>
)

// Options choose the fixture's shape.
type Options struct {
	// Tokenizer is WordPiece (the default) or Unigram.
	Tokenizer Tokenizer
	// Pooling is the config's: "mean" (the default) or "cls". With "cls"
	// the graph puts the sentence vector (the mean of the masked token
	// vectors) in the first token's place and one large constant vector
	// in every other token's, so that only CLS pooling tells topics
	// apart: pooled by mean instead, every text embeds alike.
	Pooling string
	// Pooled adds a second output, sentence_embedding [batch, dim], the
	// mean of the masked token vectors, as exports of bge-m3 with a pooled
	// dense output have; the config then selects it by name.
	Pooled bool
	// Weights4Bit passes the token vectors through an identity projection
	// with 4-bit weights, ONNX Runtime's contrib operator MatMulNBits
	// (domain com.microsoft), as int4 exports have. The pure-Go backend
	// cannot run it.
	Weights4Bit bool
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
	if o.Tokenizer == "" {
		o.Tokenizer = WordPiece
	}
	if o.Pooling == "" {
		o.Pooling = "mean"
	}
	if o.Tokenizer != WordPiece && o.Tokenizer != Unigram {
		return fmt.Errorf("embedtest: unknown tokenizer %q", o.Tokenizer)
	}
	if o.Pooling != "mean" && o.Pooling != "cls" {
		return fmt.Errorf("embedtest: unknown pooling %q (want mean or cls)", o.Pooling)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var tokenizer []byte
	var vocab []string
	var vectors []float32
	if o.Tokenizer == Unigram {
		var scores []float64
		vocab, scores, vectors = unigramVocabulary()
		tokenizer = unigramJSON(vocab, scores, o.MaxTokens)
	} else {
		vocab, vectors = vocabulary()
		tokenizer = tokenizerJSON(vocab, o.MaxTokens)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.onnx"), graph(vectors, len(vocab), o), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tokenizer, 0o644); err != nil {
		return err
	}
	cfg := map[string]any{"name": o.Name, "dimension": Dim, "pooling": o.Pooling, "max_tokens": o.MaxTokens}
	if o.Pooled {
		cfg["pooling"], cfg["output"] = "pooled", "sentence_embedding"
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return os.WriteFile(filepath.Join(dir, "dsearch-model.json"), b, 0o644)
}

// vocabulary returns the WordPiece token list (special tokens first) and
// the embedding matrix, row per token.
func vocabulary() ([]string, []float32) {
	v := newVectors([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}, 0, func(w string) string { return w })
	return v.vocab, v.vectors
}

// unigramVocabulary returns the Unigram pieces (special pieces first, at
// XLM-RoBERTa's ids, and <mask> last, as there), their scores and the
// embedding matrix, row per piece.
func unigramVocabulary() ([]string, []float64, []float32) {
	v := newVectors([]string{"<s>", "<pad>", "</s>", "<unk>"}, Pad, func(w string) string { return "▁" + w })
	v.add("▁", 0.3)
	for _, p := range pieces {
		v.add(p, 0.3)
	}
	v.add("<mask>", 0.05)
	// Log-probabilities, as SentencePiece scores them: special pieces 0,
	// common pieces likelier than topic words.
	scores := make([]float64, len(v.vocab))
	for i, w := range v.vocab {
		switch {
		case i < 4 || w == "<mask>":
			scores[i] = 0
		case w == "▁":
			scores[i] = -3.5
		case slices.Contains(pieces, w):
			scores[i] = -5 - 0.01*float64(i)
		case slices.Contains(stopwords, strings.TrimPrefix(w, "▁")):
			scores[i] = -6 - 0.01*float64(i)
		default:
			scores[i] = -9 - 0.01*float64(i)
		}
	}
	return v.vocab, scores, v.vectors
}

// vectors builds a vocabulary and its embedding matrix: special tokens
// (the pad token's vector zero), then the topic words, each near its
// topic's direction, then the stopwords; word spells a word as a token.
type vectors struct {
	r       *rand.Rand
	vocab   []string
	vectors []float32
}

func newVectors(special []string, pad int, word func(string) string) *vectors {
	v := &vectors{r: rand.New(rand.NewPCG(7, 11)), vectors: make([]float32, 0, 256*Dim)}
	for i, s := range special {
		if i == pad {
			v.vocab = append(v.vocab, s)
			v.vectors = append(v.vectors, make([]float32, Dim)...)
		} else {
			v.add(s, 0.05)
		}
	}
	names := []string{"heating", "games", "moving", "thesis", "food"} // fixed order: deterministic
	for _, topic := range names {
		dir := make([]float32, Dim)
		v.noise(dir, 1)
		for _, w := range Topics[topic] {
			x := make([]float32, Dim)
			for i := range x {
				x[i] = 2 * dir[i]
			}
			v.noise(x, 0.5)
			v.vocab = append(v.vocab, word(w))
			v.vectors = append(v.vectors, x...)
		}
	}
	for _, w := range stopwords {
		v.add(word(w), 0.3)
	}
	return v
}

func (v *vectors) noise(x []float32, scale float32) {
	for i := range x {
		x[i] += scale * float32(v.r.NormFloat64())
	}
}

// add appends a token with a small random vector.
func (v *vectors) add(tok string, scale float32) {
	x := make([]float32, Dim)
	v.noise(x, scale)
	v.vocab = append(v.vocab, tok)
	v.vectors = append(v.vectors, x...)
}

// graph builds the network: token vectors, optionally through the 4-bit
// identity projection, masked so that padding contributes nothing:
//
//	masked = Gather(E, input_ids) · attention_mask (+ 0 · token_type_ids)
//
// last_hidden_state is masked (mean pooling) or, for CLS pooling, the
// masked mean in the first position and the constant C in the others:
//
//	mean = (mask · masked) / (mask · mask)        [batch, 1, dim]
//	last_hidden_state = Concat(mean, mask[:, 1:] · C, axis 1)
func graph(vectors []float32, vocabSize int, o Options) []byte {
	var g onnxpb.Message
	tok := "tok"
	nodes := []onnxpb.Message{
		onnxpb.Node("Gather", "embed", []string{"E", "input_ids"}, []string{"tok"}, onnxpb.IntAttr("axis", 0)),
	}
	if o.Weights4Bit {
		tok = "tok_q4"
		nodes = append(nodes, onnxpb.DomainNode("com.microsoft", "MatMulNBits", "project", []string{"tok", "W_q4", "W_scales"}, []string{tok},
			onnxpb.IntAttr("K", Dim), onnxpb.IntAttr("N", Dim), onnxpb.IntAttr("bits", 4), onnxpb.IntAttr("block_size", q4Block)))
	}
	nodes = append(nodes,
		onnxpb.Node("Cast", "mask_f", []string{"attention_mask"}, []string{"mask_f"}, onnxpb.IntAttr("to", onnxpb.Float)),
		onnxpb.Node("Unsqueeze", "mask_u", []string{"mask_f", "axes2"}, []string{"mask_u"}),
		onnxpb.Node("Mul", "masked", []string{tok, "mask_u"}, []string{"masked"}),
	)
	hidden := "masked"
	if o.Tokenizer == WordPiece {
		hidden = "typed"
		nodes = append(nodes,
			onnxpb.Node("Cast", "type_f", []string{"token_type_ids"}, []string{"type_f"}, onnxpb.IntAttr("to", onnxpb.Float)),
			onnxpb.Node("Unsqueeze", "type_u", []string{"type_f", "axes2"}, []string{"type_u"}),
			onnxpb.Node("Mul", "type_zero", []string{"type_u", "zero"}, []string{"type_zero"}),
			onnxpb.Node("Add", "typed", []string{"masked", "type_zero"}, []string{hidden}),
		)
	}
	if o.Pooling == "cls" {
		nodes = append(nodes,
			onnxpb.Node("Unsqueeze", "mask_r", []string{"mask_f", "axes1"}, []string{"mask_r"}),
			onnxpb.Node("MatMul", "sum", []string{"mask_r", hidden}, []string{"sum"}),
			onnxpb.Node("MatMul", "count", []string{"mask_r", "mask_u"}, []string{"count"}),
			onnxpb.Node("Div", "mean", []string{"sum", "count"}, []string{"mean"}),
			onnxpb.Node("Slice", "rest_mask", []string{"mask_u", "one", "end", "one"}, []string{"rest_mask"}),
			onnxpb.Node("Mul", "rest", []string{"rest_mask", "C"}, []string{"rest"}),
			onnxpb.Node("Concat", "cls", []string{"mean", "rest"}, []string{"cls"}, onnxpb.IntAttr("axis", 1)),
		)
		hidden = "cls"
	}
	nodes = append(nodes, onnxpb.Node("Identity", "hidden", []string{hidden}, []string{"last_hidden_state"}))
	if o.Pooled {
		nodes = append(nodes, onnxpb.Node("ReduceMean", "pool", []string{"masked"}, []string{"sentence_embedding"}, onnxpb.IntsAttr("axes", 1), onnxpb.IntAttr("keepdims", 0)))
	}
	for _, n := range nodes {
		g = g.Sub(1, n)
	}
	g = g.Str(2, "embedtest")
	g = g.Sub(5, onnxpb.FloatTensor("E", []int64{int64(vocabSize), Dim}, vectors))
	g = g.Sub(5, onnxpb.Int64Tensor("axes2", []int64{1}, []int64{2}))
	g = g.Sub(5, onnxpb.FloatTensor("zero", []int64{1}, []float32{0}))
	if o.Pooling == "cls" {
		g = g.Sub(5, onnxpb.Int64Tensor("axes1", []int64{1}, []int64{1}))
		g = g.Sub(5, onnxpb.Int64Tensor("one", []int64{1}, []int64{1}))
		g = g.Sub(5, onnxpb.Int64Tensor("end", []int64{1}, []int64{math.MaxInt64}))
		g = g.Sub(5, onnxpb.FloatTensor("C", []int64{Dim}, constantToken()))
	}
	if o.Weights4Bit {
		w, scales := identity4Bit()
		g = g.Sub(5, onnxpb.RawTensor("W_q4", onnxpb.Uint8, []int64{Dim, Dim / q4Block, q4Block / 2}, w))
		g = g.Sub(5, onnxpb.FloatTensor("W_scales", []int64{Dim * Dim / q4Block}, scales))
	}
	inputs := []string{"input_ids", "attention_mask", "token_type_ids"}
	if o.Tokenizer == Unigram {
		inputs = inputs[:2]
	}
	for _, in := range inputs {
		g = g.Sub(11, onnxpb.ValueInfo(in, onnxpb.Int64, "batch", "sequence"))
	}
	g = g.Sub(12, onnxpb.ValueInfo("last_hidden_state", onnxpb.Float, "batch", "sequence", Dim))
	if o.Pooled {
		g = g.Sub(12, onnxpb.ValueInfo("sentence_embedding", onnxpb.Float, "batch", Dim))
	}
	opsets := []onnxpb.Opset{{Version: 13}}
	if o.Weights4Bit {
		opsets = append(opsets, onnxpb.Opset{Domain: "com.microsoft", Version: 1})
	}
	return onnxpb.Model("dsearch-embedtest", g, opsets...)
}

// constantToken is what the CLS graph puts in every token but the first:
// a fixed direction, ten times longer than a sentence vector, so that a
// mean over the tokens points at it whatever the text.
func constantToken() []float32 {
	r := rand.New(rand.NewPCG(13, 17))
	c := make([]float32, Dim)
	for i := range c {
		c[i] = 10 * float32(r.NormFloat64())
	}
	return c
}

// q4Block is the 4-bit projection's quantization block: a scale per 32
// weights of a row.
const q4Block = 32

// identity4Bit quantizes the Dim×Dim identity as MatMulNBits stores B:
// [N][K/block][block/2] bytes, two 4-bit weights a byte (the lower nibble
// first), each w = (q − 8) · scale, with the default zero point 8. Row n
// holds the weights of output n, so q = 9 on the diagonal, 8 elsewhere.
func identity4Bit() (w []byte, scales []float32) {
	w = make([]byte, Dim*Dim/2)
	for n := range Dim {
		for k := range Dim {
			q := byte(8)
			if k == n {
				q = 9
			}
			i := n*Dim/2 + k/2
			if k%2 == 0 {
				w[i] |= q
			} else {
				w[i] |= q << 4
			}
		}
	}
	scales = make([]float32, Dim*Dim/q4Block)
	for i := range scales {
		scales[i] = 1
	}
	return w, scales
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

// unigramJSON is a tokenizer.json of bge-m3's (XLM-RoBERTa's) shape,
// without its Precompiled (NFKC-like) normalizer.
func unigramJSON(vocab []string, scores []float64, maxTokens int) []byte {
	ids := map[string]int{}
	for i, w := range vocab {
		ids[w] = i
	}
	added := func(tok string, lstrip bool) map[string]any {
		return map[string]any{"id": ids[tok], "content": tok, "single_word": false, "lstrip": lstrip, "rstrip": false, "normalized": false, "special": true}
	}
	seq := func(id string) map[string]any {
		return map[string]any{"Sequence": map[string]any{"id": id, "type_id": 0}}
	}
	tok := func(id string) map[string]any {
		return map[string]any{"SpecialToken": map[string]any{"id": id, "type_id": 0}}
	}
	pieces := make([][]any, len(vocab))
	for i, w := range vocab {
		pieces[i] = []any{w, scores[i]}
	}
	metaspace := func(typ string) map[string]any {
		return map[string]any{"type": typ, "replacement": "▁", "prepend_scheme": "always", "split": true}
	}
	t := map[string]any{
		"version":    "1.0",
		"truncation": map[string]any{"direction": "Right", "max_length": maxTokens, "strategy": "LongestFirst", "stride": 0},
		"padding":    nil,
		"added_tokens": []any{added("<s>", false), added("<pad>", false), added("</s>", false), added("<unk>", false),
			added("<mask>", true)},
		"normalizer": map[string]any{"type": "Sequence", "normalizers": []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"Regex": " {2,}"}, "content": " "},
		}},
		"pre_tokenizer": metaspace("Metaspace"),
		"post_processor": map[string]any{
			"type":   "TemplateProcessing",
			"single": []any{tok("<s>"), seq("A"), tok("</s>")},
			"pair":   []any{tok("<s>"), seq("A"), tok("</s>"), tok("</s>"), seq("B"), tok("</s>")},
			"special_tokens": map[string]any{
				"<s>":  map[string]any{"id": "<s>", "ids": []int{BOS}, "tokens": []string{"<s>"}},
				"</s>": map[string]any{"id": "</s>", "ids": []int{EOS}, "tokens": []string{"</s>"}},
			},
		},
		"decoder": metaspace("Metaspace"),
		"model":   map[string]any{"type": "Unigram", "unk_id": Unk, "vocab": pieces, "byte_fallback": false},
	}
	b, _ := json.Marshal(t)
	return b
}
