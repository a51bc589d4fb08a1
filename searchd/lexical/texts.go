package lexical

import (
	"bytes"
	"math"
)

// texts keeps every doc's lower-cased CJK runs, space separated, which
// a phrase of 3+ characters is confirmed against (its bigrams only find
// candidates). They lie in chunks of textChunk docs, one byte array a
// chunk, a doc's text running from its offset to the next doc's: 4 bytes
// a message where a string took a 16-byte header, and no allocation's
// rounding. A full chunk is copied to its exact length once, and a
// deleted doc's text stays until compaction.
type texts struct {
	chunks [][]byte
}

// textChunk is how many docs share a chunk: its offsets are 32-bit, and
// a stored message is at most api.MaxContentBytes (16 KiB).
const textChunk = 1024

// add appends the text of doc n, the next doc, and returns its offset.
func (t *texts) add(n uint32, s []byte) uint32 {
	k := int(n / textChunk)
	if k == len(t.chunks) {
		if k > 0 {
			t.seal(k - 1)
		}
		t.chunks = append(t.chunks, nil)
	}
	at := len(t.chunks[k])
	if at+len(s) > math.MaxUint32 {
		panic("lexical: more than 4 GiB of CJK text in 1,024 messages")
	}
	t.chunks[k] = append(t.chunks[k], s...)
	return uint32(at)
}

// seal gives back the room chunk k grew into.
func (t *texts) seal(k int) {
	if c := t.chunks[k]; cap(c) > len(c) {
		t.chunks[k] = bytes.Clone(c)
	}
}

// text is doc n's text.
func (t *texts) text(docs []doc, n uint32) []byte {
	chunk := t.chunks[n/textChunk]
	end := len(chunk)
	if next := n + 1; next%textChunk != 0 && int(next) < len(docs) {
		end = int(docs[next].cjkAt)
	}
	return chunk[docs[n].cjkAt:end]
}
