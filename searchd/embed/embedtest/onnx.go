package embedtest

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// A minimal ONNX protobuf writer: just the messages and fields a small
// inference graph needs (field numbers from onnx.proto3).

const (
	tFloat = 1 // TensorProto.DataType FLOAT
	tInt64 = 7 // TensorProto.DataType INT64
)

type message []byte

func (m message) str(field protowire.Number, s string) message {
	m = protowire.AppendTag(m, field, protowire.BytesType)
	return protowire.AppendString(m, s)
}

func (m message) sub(field protowire.Number, sub message) message {
	m = protowire.AppendTag(m, field, protowire.BytesType)
	return protowire.AppendBytes(m, sub)
}

func (m message) varint(field protowire.Number, v int64) message {
	m = protowire.AppendTag(m, field, protowire.VarintType)
	return protowire.AppendVarint(m, uint64(v))
}

// node is a NodeProto: inputs, outputs, name, op type, attributes.
func node(op, name string, inputs, outputs []string, attrs ...message) message {
	var m message
	for _, in := range inputs {
		m = m.str(1, in)
	}
	for _, out := range outputs {
		m = m.str(2, out)
	}
	m = m.str(3, name).str(4, op)
	for _, a := range attrs {
		m = m.sub(5, a)
	}
	return m
}

// intAttr is an AttributeProto of type INT (2).
func intAttr(name string, v int64) message {
	return message(nil).str(1, name).varint(3, v).varint(20, 2)
}

// intsAttr is an AttributeProto of type INTS (7).
func intsAttr(name string, vs ...int64) message {
	m := message(nil).str(1, name)
	for _, v := range vs {
		m = m.varint(8, v)
	}
	return m.varint(20, 7)
}

// floatTensor is a TensorProto with raw little-endian data.
func floatTensor(name string, dims []int64, data []float32) message {
	var m message
	for _, d := range dims {
		m = m.varint(1, d)
	}
	m = m.varint(2, tFloat).str(8, name)
	raw := make([]byte, 4*len(data))
	for i, f := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
	}
	m = protowire.AppendTag(m, 9, protowire.BytesType)
	return protowire.AppendBytes(m, raw)
}

func int64Tensor(name string, dims []int64, data []int64) message {
	var m message
	for _, d := range dims {
		m = m.varint(1, d)
	}
	m = m.varint(2, tInt64).str(8, name)
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	m = protowire.AppendTag(m, 9, protowire.BytesType)
	return protowire.AppendBytes(m, raw)
}

// valueInfo is a ValueInfoProto for a tensor whose dims are symbolic names
// ("batch") or fixed sizes.
func valueInfo(name string, elem int64, dims ...any) message {
	var shape message
	for _, d := range dims {
		var dim message
		switch d := d.(type) {
		case string:
			dim = dim.str(2, d)
		case int:
			dim = dim.varint(1, int64(d))
		}
		shape = shape.sub(1, dim)
	}
	tensor := message(nil).varint(1, elem).sub(2, shape)
	typ := message(nil).sub(1, tensor)
	return message(nil).str(1, name).sub(2, typ)
}

// model wraps a graph in a ModelProto (IR version 8, opset 13).
func model(graph message) []byte {
	opset := message(nil).str(1, "").varint(2, 13)
	return message(nil).varint(1, 8).str(2, "dsearch-embedtest").sub(8, opset).sub(7, graph)
}
