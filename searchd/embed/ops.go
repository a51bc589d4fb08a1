package embed

import (
	"fmt"
	"strings"

	"dsearch/searchd/embed/onnxpb"
)

// goOnnxGoMLX is the onnx-gomlx version goOps was read from: hugot
// v0.6.1's pure-Go backend converts ONNX graphs with it.
const goOnnxGoMLX = "v0.3.4"

// goOps are the operators the pure-Go backend converts: the cases of the
// op switch in onnx-gomlx's convertNode (onnx/graph.go), which panics on
// any other op type when the graph is first run, not when it is loaded.
// That switch reads no node's domain: it would run a contrib operator
// that shares a standard name with the standard semantics, so only the
// default domain counts as supported. TestGoOpsMatchOnnxGoMLX compares this
// list with the source in the module cache.
var goOps = setOf(
	// Elementwise, binary.
	"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor",
	"BitwiseAnd", "BitwiseOr", "BitwiseXor",
	"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual",
	// Elementwise, unary.
	"Sqrt", "Exp", "Log", "Erf", "Relu", "Abs", "Neg", "Sign", "Ceil", "Floor",
	"Identity", "Not", "BitwiseNot", "Tanh", "Sin", "Cos",
	"MatMul", "Clip", "Where", "Min", "Max",
	"Constant", "Gather", "GatherElements", "Shape", "Concat", "Softmax", "Cast",
	"Transpose", "Gemm", "Flatten",
	"DequantizeLinear", "QuantizeLinear", "MatMulInteger", "QLinearMatMul",
	"Squeeze", "Unsqueeze", "Slice", "Reshape", "ReduceMean", "ConstantOfShape",
	"Expand", "Tile", "Range", "CumSum",
	"LSTM", "Conv", "AveragePool", "MaxPool", "GlobalAveragePool",
	"BatchNormalization", "LayerNormalization",
	"Pad", "DynamicQuantizeLinear", "Split", "Trilu", "ScatterND",
	"If",
)

// goBroken are operators goOps has that still fail in the pure-Go
// backend, with why: its integer-quantized kernels panic inside worker
// goroutines, where no recover can catch them, so the process dies.
var goBroken = map[string]string{
	"MatMulInteger":         "integer-quantized weights; onnx-gomlx's kernel crashes the process",
	"DynamicQuantizeLinear": "integer-quantized activations; onnx-gomlx's kernel crashes the process",
}

// opNotes say what well-known unsupported operators are for, so that a
// refusal explains itself.
var opNotes = map[onnxpb.Op]string{
	{Domain: "com.microsoft", Type: "MatMulNBits"}:          "4-bit weights",
	{Domain: "com.microsoft", Type: "MatMulIntegerToFloat"}: "int8 weights",
	{Domain: "com.microsoft", Type: "GatherBlockQuantized"}: "quantized embeddings",
	{Domain: "com.microsoft", Type: "QOrderedMatMul"}:       "quantized weights",
	{Domain: "", Type: "BitShift"}:                          "not implemented by onnx-gomlx " + goOnnxGoMLX,
}

func setOf(ss ...string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// goCannotRun returns the operators of ops that the pure-Go backend cannot
// run, each with why where that is known.
func goCannotRun(ops []onnxpb.Op) []string {
	var bad []string
	for _, op := range ops {
		why := opNotes[op]
		switch {
		case op.Domain == "" && goBroken[op.Type] != "":
			why = goBroken[op.Type]
		case op.Domain == "" && goOps[op.Type]:
			continue
		}
		if why != "" {
			bad = append(bad, fmt.Sprintf("%s (%s)", op, why))
		} else {
			bad = append(bad, op.String())
		}
	}
	return bad
}

// joinAnd joins "a", "b", "c" as "a, b and c".
func joinAnd(ss []string) string {
	if len(ss) < 2 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}
