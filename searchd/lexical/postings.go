package lexical

import "math"

// blockSize is how many postings share one block's bounds: small enough
// that a block's bound is close to its postings' weights, large enough
// that the bounds cost 1/16 of the postings' memory.
const blockSize = 128

// postingList is a term's postings in document order, with bounds per
// block of blockSize postings that let a search skip a block whose
// messages cannot reach the top k, or that its filter turns away.
type postingList struct {
	ps     []posting
	blocks []block
	spans  []span // a block's messages' times and channels, apart: only filtered searches read them
	// byChannel counts a long list's postings by channel ordinal (dead
	// ones included), from countedFrom postings on: how many messages of
	// an audience's channels hold a common word is then a sum over the
	// channels, not a walk over millions of postings whose blocks mix
	// channels the audience reads with one it cannot (scope.count).
	byChannel []int32
}

// countedFrom is the length from which a list counts its postings by
// channel: 80 channels' counts cost what 20 postings do.
var countedFrom = 4096

// countChannels counts l's postings by channel from scratch, when it
// reaches countedFrom postings or is rebuilt; meta describes the docs.
func (l *postingList) countChannels(meta []docMeta) {
	l.byChannel = l.byChannel[:0]
	for _, p := range l.ps {
		l.countIn(meta[p.doc].channel)
	}
}

func (l *postingList) countIn(channel uint32) {
	for int(channel) >= len(l.byChannel) {
		l.byChannel = append(l.byChannel, 0)
	}
	l.byChannel[channel]++
}

// block bounds the weights of its postings: none holds the term more
// often or is shorter (deleted messages included, which only loosens it).
type block struct {
	last   uint32 // its last posting's doc
	maxTF  uint16
	minLen uint16
}

// span bounds the times and channels of a block's messages, so that a
// filtered search skips a block none of whose messages it admits. A
// list's postings follow the order messages were stored in: an export's
// channel after channel, each in time, then new messages as they come; a
// block is mostly one channel's, and spans little time.
type span struct {
	channels     uint64 // bit ordinal%64 of each message's channel
	minAt, maxAt int64
}

// add appends a posting whose message's time and channel its span does
// not bound (lists made for one search).
func (l *postingList) add(p posting) { l.addSpan(p, ^uint64(0), math.MinInt64, math.MaxInt64) }

// addOf appends a posting of the message m describes.
func (l *postingList) addOf(p posting, m docMeta) {
	l.addSpan(p, 1<<(m.channel%64), m.created, m.created)
}

func (l *postingList) addSpan(p posting, channels uint64, from, to int64) {
	if len(l.ps)%blockSize == 0 {
		l.blocks = append(l.blocks, block{minLen: longDoc})
		l.spans = append(l.spans, span{minAt: math.MaxInt64, maxAt: math.MinInt64})
	}
	l.ps = append(l.ps, p)
	bl, sp := &l.blocks[len(l.blocks)-1], &l.spans[len(l.spans)-1]
	bl.last, bl.maxTF, bl.minLen = p.doc, max(bl.maxTF, p.tf), min(bl.minLen, p.len)
	sp.channels |= channels
	sp.minAt, sp.maxAt = min(sp.minAt, from), max(sp.maxAt, to)
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
// the sum of its frequencies. It merges the lists in pairs, rounds of
// sequential passes: most of a syllable's bigrams are rare, and a heap
// of hundreds of lists costs more than the copying.
func mergeSum(lists [][]posting, fn func(posting)) {
	for len(lists) > 1 {
		next := lists[:0:0]
		for i := 0; i < len(lists); i += 2 {
			if i+1 == len(lists) {
				next = append(next, lists[i])
			} else {
				next = append(next, merge2(lists[i], lists[i+1]))
			}
		}
		lists = next
	}
	for _, ps := range lists {
		for _, p := range ps {
			fn(p)
		}
	}
}

// merge2 merges two sorted lists, adding the frequencies of a doc in both.
func merge2(a, b []posting) []posting {
	out := make([]posting, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0].doc < b[0].doc:
			out, a = append(out, a[0]), a[1:]
		case b[0].doc < a[0].doc:
			out, b = append(out, b[0]), b[1:]
		default:
			p := a[0]
			p.tf = uint16(min(int(p.tf)+int(b[0].tf), math.MaxUint16))
			out, a, b = append(out, p), a[1:], b[1:]
		}
	}
	return append(append(out, a...), b...)
}
