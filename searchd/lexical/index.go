package lexical

import (
	"bytes"
	"cmp"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Index is an in-memory inverted index over messages that ranks by the
// same BM25 as FTS5's bm25() (k1 = 1.2, b = 0.75, a row's length counted
// over both columns). FTS5 must score every match before it can rank, a
// few microseconds each in pure-Go SQLite; here a common word's tens of
// thousands of postings are summed in a millisecond. FTS5 stays the
// store of record and the fallback: this is a cache that follows it.
type Index struct {
	mu   sync.RWMutex
	docs []doc
	// meta is what a filter reads of a message, apart from docs: a
	// filtered search reads it for every candidate, so it is small (16
	// bytes a message).
	meta []docMeta
	byID docTable
	dead bitset // docs deleted or replaced, until compaction
	// deadDocs lists them, in the order deleted: a long list's counts by
	// channel include them until compaction (scope.count).
	deadDocs []uint32
	texts    texts
	// postings holds each term's list by pointer: a map assignment would
	// replace the key with the new message's token, a slice of its text
	// that kept the whole text alive (see Put).
	postings map[string]*postingList
	// prefixes lists, per CJK character, the bigram tokens it begins, for
	// one-syllable terms (집 → 집에, 집이, 집).
	prefixes map[rune][]string
	// channels and authors number the IDs docMeta holds.
	channels, authors ordinals
	live              int
	tokens            int64 // over live docs
	// perChannel totals each channel's live docs (by ordinal), for
	// Rarity over some channels.
	perChannel []totals
}

// totals are some docs' number and length.
type totals struct {
	docs   int
	tokens int64
}

// doc is a message's record: 16 bytes (whether it is deleted is in dead).
type doc struct {
	id     int64
	length uint32
	cjkAt  uint32 // where its text begins in its chunk of texts
}

// docMeta is a message's time, channel and author (by ordinal).
type docMeta struct {
	created         int64
	channel, author uint32
}

// ordinals numbers IDs densely, in the order first seen.
type ordinals struct {
	of  map[int64]uint32
	ids []int64
}

func (o *ordinals) ordinal(id int64) uint32 {
	n, ok := o.of[id]
	if !ok {
		if o.of == nil {
			o.of = map[int64]uint32{}
		}
		n = uint32(len(o.ids))
		o.of[id] = n
		o.ids = append(o.ids, id)
	}
	return n
}

// posting is a message holding a term: how often, and the message's
// length (in the struct's padding: no memory, and no look-up of the
// message to score it), or longDoc when it does not fit.
type posting struct {
	doc uint32
	tf  uint16
	len uint16
}

const longDoc = math.MaxUint16

// Doc is a message as the index keeps it.
type Doc struct {
	ID, ChannelID, AuthorID, CreatedAt int64
	Content                            string
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{postings: map[string]*postingList{}, prefixes: map[rune][]string{}}
}

// Len is the number of messages indexed.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

// countIn adds docs and tokens to a channel's totals.
func (x *Index) countIn(channel uint32, docs int, tokens int64) {
	for int(channel) >= len(x.perChannel) {
		x.perChannel = append(x.perChannel, totals{})
	}
	t := &x.perChannel[channel]
	t.docs += docs
	t.tokens += tokens
}

// Rarity is, over the live messages of channels (none: of every
// channel), how many hold each of terms (as a search matches them), how
// many there are and their mean length (TermLength): how common a word is
// where a search may look, told from none of the messages elsewhere (a
// member asking must learn nothing of a channel they cannot read, not
// even how often a word is said there).
func (x *Index) Rarity(terms []Term, channels []int64) (df []int, n int, avgLen float64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	sc := x.scope(channels)
	df = make([]int, len(terms))
	for i, t := range terms {
		df[i] = sc.count(x.match(t))
	}
	return df, sc.live, sc.avg
}

// scope is what statistics a search's weights are counted over: the
// messages of some channels.
type scope struct {
	x     *Index
	in    *admits // nil: every channel
	whole uint64  // the span bits all of whose channels are in
	live  int
	avg   float64
}

// scope is channels' (none: every channel's); x.mu is held.
func (x *Index) scope(channels []int64) scope {
	if len(channels) == 0 {
		return scope{x: x, live: x.live, avg: mean(x.tokens, x.live)}
	}
	a := x.admits(Filter{Channels: channels})
	sc := scope{x: x, in: a, whole: a.channelBits}
	var tokens int64
	for c, in := range a.channels {
		if !in {
			sc.whole &^= 1 << (c % 64)
		} else if c < len(x.perChannel) {
			sc.live += x.perChannel[c].docs
			tokens += x.perChannel[c].tokens
		}
	}
	sc.avg = mean(tokens, sc.live)
	return sc
}

// count is how many of l's live messages are in the scope; live is how
// many l holds in all (match's).
func (sc scope) count(l postingList, live int) int {
	if sc.in == nil {
		return live
	}
	x, n := sc.x, 0
	deleted := x.live < len(x.docs)
	if l.byChannel != nil && len(x.deadDocs) <= maxDeadLookups {
		for c, k := range l.byChannel {
			if c < len(sc.in.channels) && sc.in.channels[c] {
				n += int(k)
			}
		}
		// Less the deleted messages of the scope the list holds (its
		// postings are in doc order).
		for _, d := range x.deadDocs {
			if sc.in.channels[x.meta[d].channel] {
				if _, found := slices.BinarySearchFunc(l.ps, d, func(p posting, d uint32) int { return cmp.Compare(p.doc, d) }); found {
					n--
				}
			}
		}
		return n
	}
	// A block whose channels' bits are all of the scope's channels is
	// counted whole (an audience reads most channels): no message of it
	// need be looked at, unless some are deleted.
	for b := range l.blocks {
		bits := l.spans[b].channels
		if bits&sc.in.channelBits == 0 {
			continue // none of the block's messages is in the channels
		}
		ps := l.ps[b*blockSize : min((b+1)*blockSize, len(l.ps))]
		if bits&^sc.whole == 0 && !deleted {
			n += len(ps)
			continue
		}
		for _, p := range ps {
			if !x.dead.has(p.doc) && sc.in.channels[x.meta[p.doc].channel] {
				n++
			}
		}
	}
	return n
}

// maxDeadLookups bounds the deleted messages a count looks up in a long
// list (a binary search each) before it walks the list instead.
const maxDeadLookups = 4096

func mean(sum int64, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// TermLength is how much a term of a text (EachTerm) adds to the text's
// length as the index counts it (Put): a token, and a CJK run's bigrams
// (a lone character stands alone).
func TermLength(t Term) int {
	if !t.CJK {
		return 1
	}
	return 1 + max(1, utf8.RuneCountInString(t.Text)-1)
}

var countsPool = sync.Pool{New: func() any { return map[string]int{} }}

// Put adds a message or replaces its earlier version.
func (x *Index) Put(d Doc) {
	counts := countsPool.Get().(map[string]int)
	defer func() { clear(counts); countsPool.Put(counts) }()
	var length uint32
	var cjk []byte
	Tokens(d.Content, func(tok string, isCJK bool) {
		length++
		if isCJK {
			if len(cjk) > 0 {
				cjk = append(cjk, ' ')
			}
			cjk = append(cjk, tok...)
			return // searched through its bigrams
		}
		counts[tok]++
	})
	for _, bg := range strings.Fields(Bigrams(d.Content)) {
		length++
		counts[bg]++
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteLocked(d.ID)
	n := uint32(len(x.docs))
	x.docs = append(x.docs, doc{id: d.ID, length: length, cjkAt: x.texts.add(n, cjk)})
	x.meta = append(x.meta, docMeta{created: d.CreatedAt, channel: x.channels.ordinal(d.ChannelID), author: x.authors.ordinal(d.AuthorID)})
	x.byID.put(x.docs, n)
	x.dead.grow(len(x.docs))
	x.live++
	x.tokens += int64(length)
	x.countIn(x.meta[n].channel, 1, int64(length))
	for tok, c := range counts {
		l := x.postings[tok]
		if l == nil {
			// tok is a slice of the message's text or of its bigrams: a
			// copy, or the key would keep all of it.
			tok = strings.Clone(tok)
			l = new(postingList)
			x.postings[tok] = l
			if r, _ := utf8.DecodeRuneInString(tok); isCJK(r) {
				x.prefixes[r] = append(x.prefixes[r], tok)
			}
		}
		l.addOf(posting{doc: n, tf: uint16(min(c, math.MaxUint16)), len: uint16(min(length, longDoc))}, x.meta[n])
		switch {
		case l.byChannel != nil:
			l.countIn(x.meta[n].channel)
		case len(l.ps) >= countedFrom:
			l.countChannels(x.meta)
		}
	}
}

// Trim gives back the room postings grew into while loading: a list
// with more than an eighth of its length to spare is copied to its
// length (appending grew it by a quarter to double at a time), the rest
// clipped.
func (x *Index) Trim() {
	x.mu.Lock()
	defer x.mu.Unlock()
	exact := func(ps []posting) []posting {
		if cap(ps)-len(ps) > len(ps)/8 {
			return slices.Clone(ps)
		}
		return slices.Clip(ps)
	}
	for _, l := range x.postings {
		*l = postingList{ps: exact(l.ps), blocks: slices.Clip(l.blocks), spans: slices.Clip(l.spans), byChannel: slices.Clip(l.byChannel)}
	}
	x.docs, x.meta = slices.Clip(x.docs), slices.Clip(x.meta)
	if len(x.texts.chunks) > 0 {
		x.texts.seal(len(x.texts.chunks) - 1)
	}
}

// Delete removes a message; its postings go at the next compaction.
func (x *Index) Delete(id int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteLocked(id)
}

func (x *Index) deleteLocked(id int64) {
	n, ok := x.byID.get(x.docs, id)
	if !ok {
		return
	}
	x.byID.remove(x.docs, id)
	x.dead.set(n)
	x.deadDocs = append(x.deadDocs, n)
	x.live--
	x.tokens -= int64(x.docs[n].length)
	x.countIn(x.meta[n].channel, -1, -int64(x.docs[n].length))
	if dead := len(x.docs) - x.live; dead > 1024 && dead > x.live/4 {
		x.compactLocked()
	}
}

// compactLocked drops dead documents and their postings, renumbering the
// rest in order (postings stay sorted).
func (x *Index) compactLocked() {
	renum := make([]uint32, len(x.docs))
	docs, meta := make([]doc, 0, x.live), make([]docMeta, 0, x.live)
	var kept texts
	for i, d := range x.docs {
		if !x.dead.has(uint32(i)) {
			n := uint32(len(docs))
			renum[i] = n
			d.cjkAt = kept.add(n, x.texts.text(x.docs, uint32(i)))
			docs, meta = append(docs, d), append(meta, x.meta[i])
		}
	}
	for tok, l := range x.postings {
		var out postingList
		for _, p := range l.ps {
			if !x.dead.has(p.doc) {
				m := x.meta[p.doc]
				p.doc = renum[p.doc]
				out.addOf(p, m)
			}
		}
		if len(out.ps) == 0 {
			delete(x.postings, tok)
			continue
		}
		*l = postingList{ps: slices.Clip(out.ps), blocks: slices.Clip(out.blocks), spans: slices.Clip(out.spans)}
		if len(l.ps) >= countedFrom {
			l.countChannels(meta)
		}
	}
	for r, toks := range x.prefixes {
		x.prefixes[r] = slices.DeleteFunc(toks, func(t string) bool { _, ok := x.postings[t]; return !ok })
	}
	x.docs, x.meta, x.texts = docs, meta, kept
	x.dead, x.deadDocs = make(bitset, len(x.dead)), nil
	x.byID.rebuild(x.docs, x.dead)
}

// Query is a keyword search: messages holding any of Terms, ranked by
// BM25; when Required is not empty, only those holding every term of at
// least one of its alternatives (keywords and their synonyms), whose
// terms also count in the rank. Filter admits messages by channel,
// author and time.
type Query struct {
	Terms    []Term
	Required [][]Term
	Filter   Filter
	// Scope are the channels whose messages BM25's statistics (how many
	// hold a word, how long they are) are counted over: the audience's,
	// so that a score tells nothing of a channel they cannot read (none:
	// every channel, as FTS5's bm25()).
	Scope []int64
	// Among, if set, admits only these messages (by ID): those FTS5 found
	// holding a keyword phrase, whose word order the index does not keep.
	Among map[int64]bool
	Limit int
}

// Filter admits messages by channel, author and time; its zero value
// admits every message.
type Filter struct {
	Channels, Authors []int64 // one of these (none: any)
	Since, Until      int64   // at or after, at or before (0: unbounded)
}

// Admits reports whether f admits a message.
func (f *Filter) Admits(channel, author, created int64) bool {
	return (len(f.Channels) == 0 || slices.Contains(f.Channels, channel)) &&
		(len(f.Authors) == 0 || slices.Contains(f.Authors, author)) &&
		(f.Since == 0 || created >= f.Since) && (f.Until == 0 || created <= f.Until)
}

// admits is a Filter over the index's ordinals: a search asks it of
// every candidate, a few table look-ups in what fits a cache.
type admits struct {
	channels, authors []bool // by ordinal; nil admits any
	since, until      int64
	channelBits       uint64 // the channels' bits in a span's
}

// admits compiles f; nil when it admits every message.
func (x *Index) admits(f Filter) *admits {
	if len(f.Channels) == 0 && len(f.Authors) == 0 && f.Since == 0 && f.Until == 0 {
		return nil
	}
	set := func(ids []int64, o *ordinals) []bool {
		if len(ids) == 0 {
			return nil
		}
		in := make([]bool, len(o.ids))
		for _, id := range ids {
			if n, ok := o.of[id]; ok {
				in[n] = true
			}
		}
		return in
	}
	a := &admits{channels: set(f.Channels, &x.channels), authors: set(f.Authors, &x.authors), since: math.MinInt64, until: math.MaxInt64,
		channelBits: ^uint64(0)}
	if f.Since != 0 {
		a.since = f.Since
	}
	if f.Until != 0 {
		a.until = f.Until
	}
	if a.channels != nil {
		a.channelBits = 0
		for n, in := range a.channels {
			if in {
				a.channelBits |= 1 << (n % 64)
			}
		}
	}
	return a
}

// span reports whether a message of a block may be admitted.
func (a *admits) span(sp *span) bool {
	return sp.channels&a.channelBits != 0 && sp.maxAt >= a.since && sp.minAt <= a.until
}

func (a *admits) ok(m docMeta) bool {
	return (a.channels == nil || a.channels[m.channel]) && (a.authors == nil || a.authors[m.author]) &&
		m.created >= a.since && m.created <= a.until
}

// Hit is a ranked message.
type Hit struct {
	ID, AuthorID int64
	Score        float64
}

// Supports reports whether the index can answer q; a keyword phrase of
// several Latin words needs word positions, which only FTS5 keeps.
func Supports(q Query) bool {
	for _, alt := range q.Required {
		for _, t := range alt {
			if !t.CJK && strings.ContainsAny(t.Text, " \t") {
				return false
			}
		}
	}
	return true
}

// BM25 constants, FTS5's.
const (
	k1 = 1.2
	b  = 0.75
)

// match lists the messages holding t, with how often, and how many of
// them are live (a stored list keeps deleted messages until compaction;
// the lists made here hold only live ones).
func (x *Index) match(t Term) (l postingList, live int) {
	text := FoldTerm(t)
	n := utf8.RuneCountInString(text)
	switch {
	case !t.CJK || n == 2:
		l = x.list(text)
		live = len(l.ps)
		if x.live < len(x.docs) {
			for _, p := range l.ps {
				if x.dead.has(p.doc) {
					live--
				}
			}
		}
		return l, live
	case n == 1:
		// A lone character, or the first of a pair: 집 in 집에.
		r, _ := utf8.DecodeRuneInString(text)
		lists := make([][]posting, 0, len(x.prefixes[r]))
		for _, tok := range x.prefixes[r] {
			lists = append(lists, x.list(tok).ps)
		}
		mergeSum(lists, func(p posting) {
			if !x.dead.has(p.doc) {
				l.add(p) // reading each message's time and channel here cost more than filters save
			}
		})
	default:
		// A phrase of bigrams: the messages holding all its bigrams (found
		// by walking the rarest and looking up the others) that hold the
		// whole run. It is in a message at most as often as the least
		// frequent of its bigrams: counting stops there.
		runes, phrase := []rune(text), []byte(text)
		var lists []*cursor
		for i := 0; i+1 < len(runes); i++ {
			lists = append(lists, newCursor(x.list(string(runes[i:i+2]))))
		}
		slices.SortFunc(lists, func(a, b *cursor) int { return len(a.ps) - len(b.ps) })
		// A candidate keeps the span of the rarest list's block it was in:
		// it bounds the message's time and channel.
		type candidate struct {
			posting // tf: the count's bound
			in      *span
		}
		var batch []candidate
		confirm := func() {
			// The texts are read twice: first only touched, no load
			// waiting on another, so that the memory fetches many at once
			// (a text is a cache miss or two away), then searched.
			var touched byte
			for _, p := range batch {
				if s := x.texts.text(x.docs, p.doc); len(s) > 0 {
					touched += s[0]
				}
			}
			runtime.KeepAlive(touched)
			for _, p := range batch {
				if x.dead.has(p.doc) {
					continue
				}
				if c := overlapping(x.texts.text(x.docs, p.doc), phrase, int(p.tf)); c > 0 {
					p.tf = uint16(c)
					l.addSpan(p.posting, p.in.channels, p.in.minAt, p.in.maxAt)
				}
			}
			batch = batch[:0]
		}
		rarest := lists[0]
	candidates:
		for i, p := range rarest.ps {
			for _, c := range lists[1:] {
				if c.seek(p.doc); c.done() || c.doc() != p.doc {
					continue candidates
				}
				p.tf = min(p.tf, c.ps[c.pos].tf)
			}
			if batch = append(batch, candidate{p, &rarest.spans[i/blockSize]}); len(batch) == phraseBatch {
				confirm()
			}
		}
		confirm()
	}
	return l, len(l.ps)
}

// list is tok's postings (none if no message holds it).
func (x *Index) list(tok string) postingList {
	if l := x.postings[tok]; l != nil {
		return *l
	}
	return postingList{}
}

// phraseBatch is how many candidates of a phrase have their texts read
// at once: their cache lines stay in a core's cache.
const phraseBatch = 512

// overlapping counts occurrences of sub in s, overlaps included (하하 is
// twice in 하하하, as its bigrams are), up to most.
func overlapping(s, sub []byte, most int) int {
	n := 0
	for n < most {
		i := bytes.Index(s, sub)
		if i < 0 {
			return n
		}
		n++
		_, size := utf8.DecodeRune(s[i:])
		s = s[i+size:]
	}
	return n
}

func better(a, b Hit) bool { return a.Score > b.Score || a.Score == b.Score && a.ID < b.ID }
