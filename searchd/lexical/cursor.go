package lexical

import "math"

// cursor walks one distinct query term's postings.
type cursor struct {
	postingList
	pos     int
	cur     uint32 // ps[pos].doc, or exhausted past the end: the walk's hot read
	idf     float64
	bound   float64 // on the term's weight in any message
	inTerms bool    // a query term, not only a keyword

	has bool    // holds the current candidate
	w   float64 // weight in it
}

// exhausted is a cursor's doc past its last posting: after every doc.
const exhausted = math.MaxUint32

func newCursor(l postingList) *cursor {
	c := &cursor{postingList: l}
	c.moveTo(0)
	return c
}

func (c *cursor) done() bool  { return c.cur == exhausted }
func (c *cursor) doc() uint32 { return c.cur }

func (c *cursor) moveTo(pos int) {
	c.pos = pos
	if pos < len(c.ps) {
		c.cur = c.ps[pos].doc
	} else {
		c.pos, c.cur = len(c.ps), exhausted
	}
}

// seek moves to the first posting at or after doc.
func (c *cursor) seek(doc uint32) {
	if c.cur < doc {
		c.seekAfter(doc)
	}
}

func (c *cursor) seekAfter(doc uint32) {
	bi := c.pos / blockSize
	if c.blocks[bi].last < doc {
		rest := c.blocks[bi+1:]
		bi += 1 + searchBlocks(rest, doc)
		if bi >= len(c.blocks) {
			c.moveTo(len(c.ps))
			return
		}
		c.pos = bi * blockSize
	}
	// The block's last doc is at or after doc: the scan stops in it.
	pos := c.pos
	for c.ps[pos].doc < doc {
		pos++
	}
	c.pos, c.cur = pos, c.ps[pos].doc
}

// searchBlocks is the first block whose last doc is at or after doc.
func searchBlocks(bs []block, doc uint32) int {
	lo, hi := 0, len(bs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bs[m].last < doc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
