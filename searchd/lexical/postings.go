package lexical

import (
	"container/heap"
	"math"
)

// blockSize is how many postings share one block's bounds: small enough
// that a block's bound is close to its postings' weights, large enough
// that the bounds cost 1/16 of the postings' memory.
const blockSize = 128

// postingList is a term's postings in document order, with bounds per
// block of blockSize postings that let a search skip a block whose
// messages cannot reach the top k.
type postingList struct {
	ps     []posting
	blocks []block
}

// block bounds the weights of its postings: none holds the term more
// often or is shorter (deleted messages included, which only loosens it).
type block struct {
	last   uint32 // its last posting's doc
	maxTF  uint16
	minLen uint16
}

func (l *postingList) add(p posting) {
	if len(l.ps)%blockSize == 0 {
		l.blocks = append(l.blocks, block{minLen: longDoc})
	}
	l.ps = append(l.ps, p)
	bl := &l.blocks[len(l.blocks)-1]
	bl.last, bl.maxTF, bl.minLen = p.doc, max(bl.maxTF, p.tf), min(bl.minLen, p.len)
}

// bitset marks docs.
type bitset []uint64

func (s *bitset) grow(n int) {
	for len(*s)*64 < n {
		*s = append(*s, 0)
	}
}
func (s bitset) set(i uint32)      { s[i/64] |= 1 << (i % 64) }
func (s bitset) has(i uint32) bool { return s[i/64]&(1<<(i%64)) != 0 }

// mergeSum calls fn for each doc of the sorted lists in order, once, with
// the sum of its frequencies.
func mergeSum(lists [][]posting, fn func(posting)) {
	h := make(listHeap, 0, len(lists))
	for _, ps := range lists {
		if len(ps) > 0 {
			h = append(h, ps)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		p := h[0][0]
		tf := 0
		for len(h) > 0 && h[0][0].doc == p.doc {
			tf += int(h[0][0].tf)
			if h[0] = h[0][1:]; len(h[0]) == 0 {
				heap.Pop(&h)
			} else {
				heap.Fix(&h, 0)
			}
		}
		p.tf = uint16(min(tf, math.MaxUint16))
		fn(p)
	}
}

// listHeap orders posting lists by their first doc.
type listHeap [][]posting

func (h listHeap) Len() int           { return len(h) }
func (h listHeap) Less(i, j int) bool { return h[i][0].doc < h[j][0].doc }
func (h listHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *listHeap) Push(x any)        { *h = append(*h, x.([]posting)) }
func (h *listHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
