package onnxpb

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Op is an operator a graph uses: its domain and its type.
type Op struct {
	// Domain is the operator set: "" for the default ONNX domain (which
	// "ai.onnx" also names; ReadOps writes it as ""), or another, such as
	// ONNX Runtime's contrib operators, "com.microsoft".
	Domain string
	Type   string
}

// String names the operator with its domain: "ai.onnx Gather",
// "com.microsoft MatMulNBits".
func (o Op) String() string {
	if o.Domain == "" {
		return "ai.onnx " + o.Type
	}
	return o.Domain + " " + o.Type
}

// Field numbers from onnx.proto3 that ReadOps follows.
const (
	modelGraph      = 7  // ModelProto.graph
	graphNode       = 1  // GraphProto.node
	nodeOpType      = 4  // NodeProto.op_type
	nodeAttribute   = 5  // NodeProto.attribute
	nodeDomain      = 7  // NodeProto.domain
	attributeGraph  = 6  // AttributeProto.g
	attributeGraphs = 11 // AttributeProto.graphs
)

// maxName bounds an op type or domain: they are short names, and a
// longer one means the bytes are not what they claim to be.
const maxName = 1 << 10

// ReadOps lists the operators of the serialized ModelProto read from r:
// each distinct (domain, op type) of the graph's nodes, and of the
// subgraphs that nodes hold in attributes (the branches of If, the body
// of Loop and Scan), once each. It streams: weights
// (initializers, tensor attributes) are skipped, not held, so a model
// file of gigabytes needs no more memory than its node list. An input that
// is not a well-formed ModelProto with a graph is an error.
func ReadOps(r io.Reader) ([]Op, error) {
	rd := &reader{r: bufio.NewReaderSize(r, 1<<16)}
	ops := &opSet{seen: map[Op]bool{}}
	graphs := 0
	err := rd.message(-1, func(num protowire.Number, end int64) error {
		if num != modelGraph {
			return nil
		}
		graphs++
		return rd.graph(end, ops)
	})
	if err != nil {
		return nil, err
	}
	if graphs == 0 {
		return nil, errors.New("not an ONNX model: no graph")
	}
	return ops.list, nil
}

type opSet struct {
	seen map[Op]bool
	list []Op
}

func (s *opSet) add(op Op) {
	if op.Domain == "ai.onnx" {
		op.Domain = ""
	}
	if !s.seen[op] {
		s.seen[op] = true
		s.list = append(s.list, op)
	}
}

// reader reads protobuf fields from a stream, counting its offset so that
// embedded messages can be bounded.
type reader struct {
	r   *bufio.Reader
	off int64
}

func (r *reader) ReadByte() (byte, error) {
	b, err := r.r.ReadByte()
	if err == nil {
		r.off++
	}
	return b, err
}

func (r *reader) skip(n int64) error {
	for n > 0 {
		k := int(min(n, 1<<30))
		d, err := r.r.Discard(k)
		r.off += int64(d)
		if err != nil {
			return r.truncated(err)
		}
		n -= int64(k)
	}
	return nil
}

func (r *reader) truncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("not an ONNX model: truncated at byte %d", r.off)
	}
	return err
}

func (r *reader) malformed(what string) error {
	return fmt.Errorf("not an ONNX model: %s at byte %d", what, r.off)
}

func (r *reader) uvarint() (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, r.malformed("overlong varint")
		}
		b, err := r.ReadByte()
		if err != nil {
			return 0, r.truncated(err)
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
}

// message reads the fields of a message that ends at offset end (-1: at
// the end of the stream). For each length-delimited field it calls field
// with the field's number and its end offset; field either reads the
// field's bytes to exactly that offset or leaves them all, and then they
// are skipped. Other fields are skipped.
func (r *reader) message(end int64, field func(num protowire.Number, end int64) error) error {
	for end < 0 || r.off < end {
		if end < 0 {
			if _, err := r.r.Peek(1); err == io.EOF {
				return nil
			}
		}
		tag, err := r.uvarint()
		if err != nil {
			return err
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		if !num.IsValid() {
			return r.malformed(fmt.Sprintf("invalid field number %d", num))
		}
		switch typ {
		case protowire.VarintType:
			_, err = r.uvarint()
		case protowire.Fixed32Type:
			err = r.skip(4)
		case protowire.Fixed64Type:
			err = r.skip(8)
		case protowire.BytesType:
			var n uint64
			if n, err = r.uvarint(); err != nil {
				return err
			}
			if n > 1<<62 || end >= 0 && int64(n) > end-r.off {
				return r.malformed(fmt.Sprintf("field %d overruns its message", num))
			}
			fieldEnd := r.off + int64(n)
			if err = field(num, fieldEnd); err != nil {
				return err
			}
			switch {
			case r.off < fieldEnd:
				err = r.skip(fieldEnd - r.off)
			case r.off > fieldEnd:
				return r.malformed(fmt.Sprintf("field %d overruns its length", num))
			}
		default: // groups (never in ONNX) and invalid wire types
			return r.malformed(fmt.Sprintf("wire type %d in field %d", typ, num))
		}
		if err != nil {
			return err
		}
	}
	if r.off != end {
		return r.malformed("message overruns its length")
	}
	return nil
}

// graph reads a GraphProto's nodes.
func (r *reader) graph(end int64, ops *opSet) error {
	return r.message(end, func(num protowire.Number, end int64) error {
		if num != graphNode {
			return nil
		}
		var op Op
		err := r.message(end, func(num protowire.Number, end int64) error {
			var err error
			switch num {
			case nodeOpType:
				op.Type, err = r.name(end)
			case nodeDomain:
				op.Domain, err = r.name(end)
			case nodeAttribute:
				err = r.message(end, func(num protowire.Number, end int64) error {
					if num == attributeGraph || num == attributeGraphs {
						return r.graph(end, ops)
					}
					return nil
				})
			}
			return err
		})
		if err != nil {
			return err
		}
		if op.Type == "" {
			return r.malformed("node without an op type")
		}
		ops.add(op)
		return nil
	})
}

func (r *reader) name(end int64) (string, error) {
	n := end - r.off
	if n > maxName {
		return "", r.malformed(fmt.Sprintf("name of %d bytes", n))
	}
	b := make([]byte, n)
	k, err := io.ReadFull(r.r, b)
	r.off += int64(k)
	if err != nil {
		return "", r.truncated(err)
	}
	return string(b), nil
}
