package embed

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"dsearch/searchd/embed/embedtest"
	"dsearch/searchd/embed/onnxpb"
)

// goOps must be what the linked onnx-gomlx converts: read the op switch
// of its convertNode from the module cache.
func TestGoOpsMatchOnnxGoMLX(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to find onnx-gomlx's source")
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "github.com/gomlx/onnx-gomlx").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	version, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if version != goOnnxGoMLX {
		t.Errorf("searchd links onnx-gomlx %s, but goOps lists %s's operators: read its convertNode again", version, goOnnxGoMLX)
	}
	src, err := os.ReadFile(filepath.Join(dir, "onnx", "graph.go"))
	if err != nil {
		t.Skipf("onnx-gomlx source not in the module cache (go mod download): %v", err)
	}
	_, body, ok := bytes.Cut(src, []byte("func (m *Model) convertNode("))
	if !ok {
		t.Fatal("no convertNode in onnx-gomlx's onnx/graph.go: read its op dispatch again")
	}
	body, _, _ = bytes.Cut(body, []byte("\n}\n"))
	var theirs []string
	for _, c := range regexp.MustCompile(`(?m)^\s*case ("[^:]*"):`).FindAllSubmatch(body, -1) {
		for _, q := range strings.Split(string(c[1]), ",") {
			theirs = append(theirs, strings.Trim(strings.TrimSpace(q), `"`))
		}
	}
	if len(theirs) < 50 {
		t.Fatalf("found only %d ops in convertNode: %v", len(theirs), theirs)
	}
	for _, op := range theirs {
		if !goOps[op] {
			t.Errorf("onnx-gomlx %s converts %s; goOps lacks it", version, op)
		}
	}
	for op := range goOps {
		if !slices.Contains(theirs, op) {
			t.Errorf("goOps has %s; onnx-gomlx %s does not convert it", op, version)
		}
	}
}

// withGraph writes the fixture, then replaces its network with a graph of
// the given nodes (the check reads the node list; the graph need not run).
func withGraph(t *testing.T, nodes ...onnxpb.Message) string {
	t.Helper()
	dir := t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	var g onnxpb.Message
	for _, n := range nodes {
		g = g.Sub(1, n)
	}
	g = g.Str(2, "test")
	b := onnxpb.Model("test", g, onnxpb.Opset{Version: 17}, onnxpb.Opset{Domain: "com.microsoft", Version: 1})
	if err := os.WriteFile(filepath.Join(dir, "model.onnx"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGoRefusesOps(t *testing.T) {
	node := func(op string) onnxpb.Message { return onnxpb.Node(op, op, []string{"x", "y"}, []string{op}) }
	contrib := func(op string) onnxpb.Message {
		return onnxpb.DomainNode("com.microsoft", op, op, []string{"x", "y"}, []string{op})
	}
	q4 := t.TempDir()
	if err := embedtest.Write(q4, embedtest.Options{Weights4Bit: true}); err != nil {
		t.Fatal(err)
	}
	// An If whose else branch holds a contrib operator.
	branch := func(n onnxpb.Message) onnxpb.Message {
		return onnxpb.Message(nil).Sub(6, onnxpb.Message(nil).Sub(1, n).Str(2, "branch")).Varint(20, 5)
	}
	ifNode := onnxpb.Node("If", "if", []string{"c"}, []string{"if"},
		branch(node("Add")).Str(1, "then_branch"), branch(contrib("FusedMatMul")).Str(1, "else_branch"))
	tests := []struct {
		name string
		dir  string
		want []string
	}{
		{"4-bit fixture", q4, []string{"uses com.microsoft MatMulNBits (4-bit weights), which the pure-Go backend cannot run; use --embed-backend ort"}},
		{"quantized", withGraph(t, node("DynamicQuantizeLinear"), node("MatMulInteger"), node("Add")),
			[]string{"ai.onnx DynamicQuantizeLinear (integer-quantized activations", "and ai.onnx MatMulInteger (integer-quantized weights"}},
		{"not in onnx-gomlx", withGraph(t, node("Gather"), node("BitShift"), node("ReduceSum")),
			[]string{"uses ai.onnx BitShift (not implemented by onnx-gomlx v0.3.4) and ai.onnx ReduceSum, which"}},
		{"contrib embedding", withGraph(t, contrib("GatherBlockQuantized")), []string{"com.microsoft GatherBlockQuantized (quantized embeddings)"}},
		// onnx-gomlx dispatches on the op type alone: a contrib operator
		// named like a standard one must not pass for it.
		{"contrib, standard name", withGraph(t, contrib("Gather")), []string{"uses com.microsoft Gather, which"}},
		{"in a subgraph", withGraph(t, ifNode), []string{"uses com.microsoft FusedMatMul, which"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Load(tt.dir, Options{Backend: Go})
			if err == nil {
				m.Close()
				t.Fatal("loaded on the Go backend")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load: %v\nwant %q", err, w)
				}
			}
		})
	}
	// Standard operators it converts pass the check (and the domain
	// "ai.onnx" is the default one).
	ok := withGraph(t, node("Gather"), node("LayerNormalization"), onnxpb.DomainNode("ai.onnx", "Erf", "erf", []string{"x"}, []string{"e"}))
	if err := checkGoCanRun(ok); err != nil {
		t.Errorf("checkGoCanRun: %v", err)
	}
}

// The 4-bit fixture runs on ONNX Runtime: the operator the pure-Go
// backend refuses is a real one, and the fixture's weights are laid out
// as ONNX Runtime reads them.
func TestWeights4BitOnORT(t *testing.T) {
	o := ortOptions(t, "MatMulNBits")
	plain, q4 := t.TempDir(), t.TempDir()
	embedtest.Write(plain, embedtest.Options{})
	if err := embedtest.Write(q4, embedtest.Options{Weights4Bit: true}); err != nil {
		t.Fatal(err)
	}
	texts := []string{"the boiler broke", "finished the game ending", "moving to a new apartment"}
	vecs := [2][][]float32{embedWith(t, plain, o, texts), embedWith(t, q4, o, texts)}
	// The projection is the identity, exactly representable in 4 bits.
	for i := range texts {
		if s := dot(vecs[0][i], vecs[1][i]); s < 0.9999 {
			t.Errorf("%q: 4-bit identity changed the vector (similarity %.5f)", texts[i], s)
		}
	}
}

// q4Table writes the WordPiece fixture with its embedding table stored as
// 4-bit weights in the standard domain, unpacked in the graph: low nibble
// BitwiseAnd 15, high nibble Div 16 (or BitShift 4), then
// w = (q − 8) · scale. It returns the directory and the table as the graph
// computes it, row per token id.
func q4Table(t *testing.T, shift bool) (string, [][]float32) {
	t.Helper()
	const rows, d = 256, embedtest.Dim // rows: more than the fixture's vocabulary
	const scale = 0.125
	r := rand.New(rand.NewPCG(3, 5))
	packed := make([]byte, rows*d/2)
	for i := range packed {
		packed[i] = byte(r.IntN(256))
	}
	table := make([][]float32, rows)
	for i := range table {
		table[i] = make([]float32, d)
		for k := range d / 2 {
			b := packed[i*d/2+k]
			table[i][2*k] = float32(int(b&15)-8) * scale
			table[i][2*k+1] = float32(int(b>>4)-8) * scale
		}
	}
	n := onnxpb.Node
	high := n("Div", "hi", []string{"Wq", "u16"}, []string{"hi"})
	if shift {
		high = n("BitShift", "hi", []string{"Wq", "u4"}, []string{"hi"}, onnxpb.StrAttr("direction", "RIGHT"))
	}
	nodes := []onnxpb.Message{
		n("BitwiseAnd", "lo", []string{"Wq", "u15"}, []string{"lo"}),
		high,
		n("Unsqueeze", "lo_u", []string{"lo", "last"}, []string{"lo_u"}),
		n("Unsqueeze", "hi_u", []string{"hi", "last"}, []string{"hi_u"}),
		n("Concat", "nibbles", []string{"lo_u", "hi_u"}, []string{"nibbles"}, onnxpb.IntAttr("axis", -1)),
		n("Cast", "nibbles_f", []string{"nibbles"}, []string{"nibbles_f"}, onnxpb.IntAttr("to", onnxpb.Float)),
		n("Sub", "centered", []string{"nibbles_f", "eight"}, []string{"centered"}),
		n("Mul", "scaled", []string{"centered", "scale"}, []string{"scaled"}),
		n("Reshape", "E", []string{"scaled", "table_shape"}, []string{"E"}),
		n("Gather", "embed", []string{"E", "input_ids"}, []string{"tok"}, onnxpb.IntAttr("axis", 0)),
		n("Cast", "mask_f", []string{"attention_mask"}, []string{"mask_f"}, onnxpb.IntAttr("to", onnxpb.Float)),
		n("Unsqueeze", "mask_u", []string{"mask_f", "last"}, []string{"mask_u"}),
		n("Mul", "masked", []string{"tok", "mask_u"}, []string{"masked"}),
		n("Cast", "type_f", []string{"token_type_ids"}, []string{"type_f"}, onnxpb.IntAttr("to", onnxpb.Float)),
		n("Unsqueeze", "type_u", []string{"type_f", "last"}, []string{"type_u"}),
		n("Mul", "type_zero", []string{"type_u", "zero"}, []string{"type_zero"}),
		n("Add", "hidden", []string{"masked", "type_zero"}, []string{"last_hidden_state"}),
	}
	var g onnxpb.Message
	for _, nd := range nodes {
		g = g.Sub(1, nd)
	}
	g = g.Str(2, "q4table")
	g = g.Sub(5, onnxpb.RawTensor("Wq", onnxpb.Uint8, []int64{rows * d / 2}, packed))
	for name, v := range map[string]byte{"u15": 15, "u16": 16, "u4": 4} {
		g = g.Sub(5, onnxpb.RawTensor(name, onnxpb.Uint8, []int64{1}, []byte{v}))
	}
	g = g.Sub(5, onnxpb.Int64Tensor("last", []int64{1}, []int64{-1}))
	g = g.Sub(5, onnxpb.Int64Tensor("table_shape", []int64{2}, []int64{rows, d}))
	g = g.Sub(5, onnxpb.FloatTensor("eight", []int64{1}, []float32{8}))
	g = g.Sub(5, onnxpb.FloatTensor("scale", []int64{1}, []float32{scale}))
	g = g.Sub(5, onnxpb.FloatTensor("zero", []int64{1}, []float32{0}))
	for _, in := range []string{"input_ids", "attention_mask", "token_type_ids"} {
		g = g.Sub(11, onnxpb.ValueInfo(in, onnxpb.Int64, "batch", "sequence"))
	}
	g = g.Sub(12, onnxpb.ValueInfo("last_hidden_state", onnxpb.Float, "batch", "sequence", d))
	dir := t.TempDir()
	if err := embedtest.Write(dir, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	// Opset 18: BitwiseAnd's first.
	if err := os.WriteFile(filepath.Join(dir, "model.onnx"), onnxpb.Model("q4table", g, onnxpb.Opset{Version: 18}), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, table
}

// 4-bit weights unpacked with standard operators run on the pure-Go
// backend, as long as no BitShift does the unpacking (onnx-gomlx lacks
// it; Div by 16 is the same on uint8): every backend gives the vectors
// computed here from the same nibbles.
func TestStandard4BitUnpacking(t *testing.T) {
	texts := []string{"the boiler broke", "finished the game ending", "moving to a new apartment"}
	dir, table := q4Table(t, false)
	for _, o := range testBackends(t) {
		t.Run(string(o.Backend), func(t *testing.T) {
			m := load(t, dir, o)
			got, err := m.EmbedPassages(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, ids := range tokenIDs(t, m, texts...) {
				rows := make([][]float32, len(ids))
				mask := make([]uint32, len(ids))
				for j, id := range ids {
					rows[j], mask[j] = table[id], 1
				}
				want, err := pool(Mean, rows, mask)
				if err != nil {
					t.Fatal(err)
				}
				if s := dot(got[i], want); s < 0.9999 {
					t.Errorf("%q: similarity %.5f to the vector of its unpacked weights", texts[i], s)
				}
			}
		})
	}
	// With BitShift: refused by the pure-Go backend, the same vectors on
	// ONNX Runtime.
	shifted, _ := q4Table(t, true)
	if _, err := Load(shifted, Options{Backend: Go}); err == nil || !strings.Contains(err.Error(), "ai.onnx BitShift") {
		t.Errorf("BitShift on the Go backend: %v", err)
	}
	if o := testBackends(t); o[len(o)-1].Backend == ORT {
		vecs := [2][][]float32{embedWith(t, dir, o[len(o)-1], texts), embedWith(t, shifted, o[len(o)-1], texts)}
		for i := range texts {
			if s := dot(vecs[0][i], vecs[1][i]); s < 0.9999 {
				t.Errorf("%q: Div and BitShift unpack differently on ONNX Runtime (similarity %.5f)", texts[i], s)
			}
		}
	}
}

// embedWith loads the model in dir, embeds the passages and closes it
// again (one ONNX Runtime session at a time).
func embedWith(t *testing.T, dir string, o Options, texts []string) [][]float32 {
	t.Helper()
	m, err := Load(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	v, err := m.EmbedPassages(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
