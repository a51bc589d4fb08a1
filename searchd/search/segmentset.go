package search

import (
	"math/bits"
	"slices"
)

// A segmentSet is the segments a filter admits. Segment IDs are SQLite
// row IDs, dense from 1, so it is a bitmap of them: 95 KB for the 760,000
// segments of 6.5 M messages, where a map took 30 MB (too much to cache,
// so a member's readable channels were looked up again at every search),
// and a bit test is what the matrix's scan asks at every row. IDs too
// sparse for a bitmap (over 64 bits of it an ID) or negative stay a map.
// A nil *segmentSet admits every segment; an empty one none.
type segmentSet struct {
	bits   []uint64
	sparse map[int64]bool // instead of bits: every key is in the set
	n      int
}

// newSegmentSet is the set of the IDs ids maps to true.
func newSegmentSet(ids map[int64]bool) *segmentSet {
	list := make([]int64, 0, len(ids))
	for id, in := range ids {
		if in {
			list = append(list, id)
		}
	}
	return segmentSetOf(list)
}

// segmentSetOfLists is the set of every list's ids, with no list joined
// to another first (750,000 IDs at 6.5 M: the copying cost more than the
// bitmap).
func segmentSetOfLists(lists [][]int64) *segmentSet {
	var top int64
	n := 0
	for _, l := range lists {
		for _, id := range l {
			if id < 0 {
				return segmentSetOf(slices.Concat(lists...))
			}
			top = max(top, id)
		}
		n += len(l)
	}
	if top/64 > int64(n) {
		return segmentSetOf(slices.Concat(lists...))
	}
	s := &segmentSet{bits: make([]uint64, top/64+1)}
	for _, l := range lists {
		for _, id := range l {
			s.bits[id/64] |= 1 << (id % 64)
		}
	}
	for _, w := range s.bits {
		s.n += bits.OnesCount64(w)
	}
	return s
}

// segmentSetOf is the set of ids (repeats allowed).
func segmentSetOf(ids []int64) *segmentSet {
	var top int64
	for _, id := range ids {
		if id < 0 {
			top = -1
			break
		}
		top = max(top, id)
	}
	if top < 0 || top/64 > int64(len(ids)) {
		m := make(map[int64]bool, len(ids))
		for _, id := range ids {
			m[id] = true
		}
		return &segmentSet{sparse: m, n: len(m)}
	}
	s := &segmentSet{bits: make([]uint64, top/64+1)}
	for _, id := range ids {
		s.bits[id/64] |= 1 << (id % 64)
	}
	for _, w := range s.bits {
		s.n += bits.OnesCount64(w)
	}
	return s
}

// has reports whether id is in s.
func (s *segmentSet) has(id int64) bool {
	if s.sparse != nil {
		return s.sparse[id]
	}
	return id >= 0 && id/64 < int64(len(s.bits)) && s.bits[id/64]&(1<<(id%64)) != 0
}

// admits is has as a matrix scan asks it; nil (every segment) for a nil s.
func (s *segmentSet) admits() func(int64) bool {
	if s == nil {
		return nil
	}
	return s.has
}

// len is how many segments s holds.
func (s *segmentSet) len() int { return s.n }

// ids are s's segments, ascending.
func (s *segmentSet) ids() []int64 {
	out := make([]int64, 0, s.n)
	if s.sparse != nil {
		for id := range s.sparse {
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	for w, word := range s.bits {
		for word != 0 {
			out = append(out, int64(w*64+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return out
}

// bytes is about what s holds in memory, for the filter cache's budget.
func (s *segmentSet) bytes() int {
	if s.sparse != nil {
		return 40 * len(s.sparse)
	}
	return 8 * len(s.bits)
}
