package unigram

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Precompiled is SentencePiece's precompiled normalization map (the
// "precompiled_charsmap" of a tokenizer.json): a little-endian u32 byte
// length, a darts-clone double-array trie over UTF-8 keys whose values are
// offsets into the second part, NUL-terminated replacements.
type Precompiled struct {
	units       []uint32
	replacement []byte
}

// ParsePrecompiled reads a charsmap.
func ParsePrecompiled(b []byte) (*Precompiled, error) {
	if len(b) < 4 {
		return nil, errors.New("precompiled charsmap: too short")
	}
	size := binary.LittleEndian.Uint32(b)
	if size%4 != 0 || uint64(size) > uint64(len(b)-4) || size == 0 {
		return nil, errors.New("precompiled charsmap: bad trie size")
	}
	units := make([]uint32, size/4)
	for i := range units {
		units[i] = binary.LittleEndian.Uint32(b[4+4*i:])
	}
	return &Precompiled{units: units, replacement: b[4+size:]}, nil
}

// Lookup is spm_precompiled's transform: the replacement of key's shortest
// prefix in the map (the shortest, not the longest: that is what the
// tokenizers library does, and so what models were trained with).
func (p *Precompiled) Lookup(key string) (string, bool) {
	offset := func(u uint32) int { return int((u >> 10) << ((u & (1 << 9)) >> 6)) }
	pos := offset(p.units[0])
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == 0 {
			break
		}
		pos ^= int(c)
		if pos >= len(p.units) {
			return "", false // a damaged array; the library would panic
		}
		u := p.units[pos]
		if u&(1<<31|0xff) != uint32(c) {
			return "", false
		}
		pos ^= offset(u)
		if (u>>8)&1 == 1 {
			if pos >= len(p.units) {
				return "", false
			}
			v := int(p.units[pos] & (1<<31 - 1))
			if v > len(p.replacement) {
				return "", false
			}
			end := bytes.IndexByte(p.replacement[v:], 0)
			if end < 0 {
				end = len(p.replacement) - v
			}
			return string(p.replacement[v : v+end]), true
		}
	}
	return "", false
}

// Normalize applies the map as the tokenizers library does: a grapheme
// cluster shorter than 6 bytes is looked up whole, otherwise (or when the
// whole has no entry) code point by code point.
func (p *Precompiled) Normalize(s string) string {
	var out strings.Builder
	out.Grow(len(s))
	state := -1
	for len(s) > 0 {
		var g string
		g, s, _, state = uniseg.FirstGraphemeClusterInString(s, state)
		if len(g) < 6 {
			if norm, ok := p.Lookup(g); ok {
				out.WriteString(norm)
				continue
			}
		}
		for i := 0; i < len(g); {
			_, n := utf8.DecodeRuneInString(g[i:])
			part := g[i : i+n]
			if norm, ok := p.Lookup(part); ok {
				out.WriteString(norm)
			} else {
				out.WriteString(part)
			}
			i += n
		}
	}
	return out.String()
}
