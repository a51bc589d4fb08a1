// Package onnxpb writes ONNX models: just the protobuf messages and fields
// an inference graph needs (field numbers from onnx.proto3), so that the
// model converter and the test fixtures need no ONNX library.
package onnxpb

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// TensorProto.DataType values.
const (
	Float   = 1
	Uint8   = 2
	Int8    = 3
	Int64   = 7
	Float16 = 10
)

// Message is an encoded protobuf message under construction.
type Message []byte

// Str appends a string (or bytes) field.
func (m Message) Str(field protowire.Number, s string) Message {
	m = protowire.AppendTag(m, field, protowire.BytesType)
	return protowire.AppendString(m, s)
}

// Sub appends an embedded message field.
func (m Message) Sub(field protowire.Number, sub Message) Message {
	m = protowire.AppendTag(m, field, protowire.BytesType)
	return protowire.AppendBytes(m, sub)
}

// Varint appends an integer field.
func (m Message) Varint(field protowire.Number, v int64) Message {
	m = protowire.AppendTag(m, field, protowire.VarintType)
	return protowire.AppendVarint(m, uint64(v))
}

// Node is a NodeProto: inputs, outputs, name, op type, attributes, in the
// default domain.
func Node(op, name string, inputs, outputs []string, attrs ...Message) Message {
	return DomainNode("", op, name, inputs, outputs, attrs...)
}

// DomainNode is a NodeProto of an operator set other than the default one
// (such as com.microsoft's contrib operators).
func DomainNode(domain, op, name string, inputs, outputs []string, attrs ...Message) Message {
	var m Message
	for _, in := range inputs {
		m = m.Str(1, in)
	}
	for _, out := range outputs {
		m = m.Str(2, out)
	}
	m = m.Str(3, name).Str(4, op)
	for _, a := range attrs {
		m = m.Sub(5, a)
	}
	if domain != "" {
		m = m.Str(7, domain)
	}
	return m
}

// IntAttr is an AttributeProto of type INT (2).
func IntAttr(name string, v int64) Message {
	return Message(nil).Str(1, name).Varint(3, v).Varint(20, 2)
}

// FloatAttr is an AttributeProto of type FLOAT (1).
func FloatAttr(name string, v float32) Message {
	m := Message(nil).Str(1, name)
	m = protowire.AppendTag(m, 2, protowire.Fixed32Type)
	m = protowire.AppendFixed32(m, math.Float32bits(v))
	return m.Varint(20, 1)
}

// StrAttr is an AttributeProto of type STRING (3).
func StrAttr(name, v string) Message {
	return Message(nil).Str(1, name).Str(4, v).Varint(20, 3)
}

// IntsAttr is an AttributeProto of type INTS (7).
func IntsAttr(name string, vs ...int64) Message {
	m := Message(nil).Str(1, name)
	for _, v := range vs {
		m = m.Varint(8, v)
	}
	return m.Varint(20, 7)
}

// RawTensor is a TensorProto of the given type holding raw little-endian
// data.
func RawTensor(name string, dtype int64, dims []int64, raw []byte) Message {
	var m Message
	for _, d := range dims {
		m = m.Varint(1, d)
	}
	m = m.Varint(2, dtype).Str(8, name)
	m = protowire.AppendTag(m, 9, protowire.BytesType)
	return protowire.AppendBytes(m, raw)
}

// FloatTensor is a float32 TensorProto.
func FloatTensor(name string, dims []int64, data []float32) Message {
	raw := make([]byte, 4*len(data))
	for i, f := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
	}
	return RawTensor(name, Float, dims, raw)
}

// Int64Tensor is an int64 TensorProto.
func Int64Tensor(name string, dims []int64, data []int64) Message {
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return RawTensor(name, Int64, dims, raw)
}

// ValueInfo is a ValueInfoProto for a tensor whose dims are symbolic names
// ("batch") or fixed sizes.
func ValueInfo(name string, elem int64, dims ...any) Message {
	var shape Message
	for _, d := range dims {
		var dim Message
		switch d := d.(type) {
		case string:
			dim = dim.Str(2, d)
		case int:
			dim = dim.Varint(1, int64(d))
		}
		shape = shape.Sub(1, dim)
	}
	tensor := Message(nil).Varint(1, elem).Sub(2, shape)
	typ := Message(nil).Sub(1, tensor)
	return Message(nil).Str(1, name).Sub(2, typ)
}

// Opset names an operator set and its version.
type Opset struct {
	Domain  string
	Version int64
}

// Model wraps a graph in a ModelProto. IR version 8: ONNX Runtime 1.23
// refuses anything newer than 11, which current ONNX writers default past.
func Model(producer string, graph Message, opsets ...Opset) []byte {
	m := Message(nil).Varint(1, 8).Str(2, producer)
	for _, o := range opsets {
		m = m.Sub(8, Message(nil).Str(1, o.Domain).Varint(2, o.Version))
	}
	return m.Sub(7, graph)
}
