package onnxpb

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"google.golang.org/protobuf/encoding/protowire"
)

// testModel has a default-domain node, two com.microsoft ones, a weight,
// and an If whose branches hold more nodes.
func testModel() []byte {
	branch := func(op string) Message {
		return Message(nil).Sub(1, Node(op, op, []string{"x"}, []string{"y"})).Str(2, "branch")
	}
	ifNode := Node("If", "if", []string{"cond"}, []string{"out"},
		Message(nil).Str(1, "then_branch").Sub(6, branch("Erf")).Varint(20, 5),
		Message(nil).Str(1, "else_branch").Sub(6, branch("Softmax")).Varint(20, 5))
	var g Message
	g = g.Sub(1, Node("Gather", "g", []string{"E", "ids"}, []string{"t"}, IntAttr("axis", 0)))
	g = g.Sub(1, DomainNode("com.microsoft", "MatMulNBits", "mm", []string{"t", "W"}, []string{"u"}, IntAttr("bits", 4)))
	g = g.Sub(1, DomainNode("ai.onnx", "Gather", "g2", []string{"E", "ids"}, []string{"t2"}))
	g = g.Sub(1, ifNode)
	g = g.Sub(1, DomainNode("com.microsoft", "MatMulNBits", "mm2", []string{"u", "W"}, []string{"v"}))
	g = g.Str(2, "test")
	g = g.Sub(5, FloatTensor("E", []int64{4, 2}, []float32{1, 2, 3, 4, 5, 6, 7, 8}))
	return Model("test", g, Opset{Version: 17}, Opset{Domain: "com.microsoft", Version: 1})
}

func TestReadOps(t *testing.T) {
	want := []Op{{"", "Gather"}, {"com.microsoft", "MatMulNBits"}, {"", "Erf"}, {"", "Softmax"}, {"", "If"}}
	b := testModel()
	got, err := ReadOps(bytes.NewReader(b))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadOps = %v, %v; want %v", got, err, want)
	}
	// A byte at a time: the stream is never assumed to arrive whole.
	got, err = ReadOps(iotest.OneByteReader(bytes.NewReader(b)))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("one byte at a time: ReadOps = %v, %v; want %v", got, err, want)
	}
	if s := (Op{"com.microsoft", "MatMulNBits"}).String(); s != "com.microsoft MatMulNBits" {
		t.Errorf("String = %q", s)
	}
	if s := (Op{"", "Gather"}).String(); s != "ai.onnx Gather" {
		t.Errorf("String = %q", s)
	}
}

// overlong appends field num holding sub, but with a length that claims
// ten bytes more than sub has.
func overlong(m Message, num protowire.Number, sub Message) Message {
	m = protowire.AppendTag(m, num, protowire.BytesType)
	m = protowire.AppendVarint(m, uint64(len(sub)+10))
	return append(m, sub...)
}

func TestReadOpsMalformed(t *testing.T) {
	good := testModel()
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "no graph"},
		{"text", []byte("not a model"), "wire type"},
		{"json", []byte(`{"model": 1}`), "wire type"},
		{"truncated", good[:len(good)-3], "truncated"},
		{"no graph", Message(nil).Varint(1, 8).Str(2, "x"), "no graph"},
		{"node without op", Model("x", Message(nil).Sub(1, Message(nil).Str(1, "in"))), "without an op type"},
		// A graph whose length runs past the end of the file.
		{"graph overrun", overlong(Message(nil).Varint(1, 8), 7, Message(nil).Sub(1, Node("Add", "a", nil, nil))), "truncated"},
		// A node whose length runs past its graph.
		{"node overrun", Model("x", overlong(nil, 1, Node("Add", "a", nil, nil))), "overruns its message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, err := ReadOps(bytes.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "not an ONNX model") {
				t.Errorf("ReadOps = %v, %v; want an error with %q", ops, err, tt.want)
			}
		})
	}
}
