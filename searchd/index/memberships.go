package index

import (
	"cmp"
	"context"
	"log/slog"
	"math"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"dsearch/searchd/sqlite"
)

// Memberships keeps which segment each message belongs to in memory,
// current with the database: a required keyword's segments (search's
// filters) are its messages' segments, and SQLite looks each one up
// in message_segments at about 5 µs a message (seconds for a common
// word at 6.5 M messages). Load reads every membership; afterwards each
// use applies the entries of sqlite's membership log since (placing a
// message logs it, and triggers on message_segments log moves and
// removals, whoever makes them; each entry comes with the message's
// segment as stored). A backlog of
// more than MaxCatchUp entries makes it load again in the background
// instead; while it loads, Current returns nil and the segments come
// from SQLite.
//
// It takes 12 bytes a message: message IDs in order beside their
// segments, plus a map of the changes since they were last rebuilt.
type Memberships struct {
	DB  *sqlite.DB
	Log *slog.Logger
	// MaxCatchUp is the most log entries a search applies before it runs;
	// 0 means DefaultMembershipCatchUp.
	MaxCatchUp int64

	follower[membershipTable]
	seq int64 // the last log entry applied; under mu
}

// membershipTable is message → segment. Searches read it under its read
// lock; a catch-up changes it under its write lock.
type membershipTable struct {
	mu       sync.RWMutex
	messages []int64  // ascending
	segments []uint32 // messages[i]'s segment
	// changed holds what changed since messages and segments were built
	// (0: in no segment); it is folded into them when it grows.
	changed map[int64]int64
	// wide: a segment ID outside 1..2³²-1, which segments cannot hold;
	// the table is then not used (SQLite answers).
	wide bool
}

// DefaultMembershipCatchUp: an import's batch of 5,000 messages is
// read and applied in tens of milliseconds (a look-up in message_segments
// each); a whole import's is a reload's work.
const DefaultMembershipCatchUp = 200_000

// Load builds the table from every membership.
func (m *Memberships) Load(ctx context.Context) error {
	start := time.Now()
	t := &membershipTable{changed: map[int64]int64{}}
	seq, err := m.DB.ScanMemberships(ctx, func(message, segment int64) {
		t.messages = append(t.messages, message)
		t.segments = append(t.segments, t.narrow(segment))
	})
	if err != nil {
		return err
	}
	t.messages, t.segments = slices.Clip(t.messages), slices.Clip(t.segments)
	m.mu.Lock()
	m.seq = seq
	m.ready.Store(t)
	m.mu.Unlock()
	debug.FreeOSMemory() // the slices' growth left garbage as large as them
	if m.Log != nil {
		m.Log.Info("segment memberships loaded", "messages", len(t.messages), "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// Len is the number of messages with a segment (0 while loading).
func (m *Memberships) Len() int {
	t := m.ready.Load()
	if t == nil {
		return 0
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := len(t.messages)
	for id, seg := range t.changed {
		_, found := slices.BinarySearch(t.messages, id)
		switch {
		case seg != 0 && !found:
			n++
		case seg == 0 && found:
			n--
		}
	}
	return n
}

// Current returns a reader of the memberships with every change so far
// applied, or nil while they (re)load or when they cannot be held.
func (m *Memberships) Current(ctx context.Context) (*MembershipReader, error) {
	seq, err := m.DB.MembershipSeq(ctx)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.ready.Load()
	switch {
	case t == nil:
		return nil, nil
	case seq < m.seq:
		// The log went back: another database under the same name (a
		// restore).
		m.reload()
		return nil, nil
	case seq == m.seq:
	case seq-m.seq > cmp.Or(m.MaxCatchUp, DefaultMembershipCatchUp):
		m.reload()
		return nil, nil
	default:
		changes, err := m.DB.MembershipChanges(ctx, m.seq)
		if err != nil {
			return nil, err
		}
		t.apply(changes)
		if len(changes) > 0 {
			m.seq = changes[len(changes)-1].Seq
		}
	}
	if t.wide {
		return nil, nil
	}
	return &MembershipReader{t}, nil
}

// reload loads the table again in the background, once at a time; m.mu is
// held.
func (m *Memberships) reload() {
	m.follower.reload(m.Load, m.Log, "segment memberships: reload failed; keywords' segments come from SQLite")
}

// Run loads the table, then keeps it current and trims the log every
// interval until ctx ends.
func (m *Memberships) Run(ctx context.Context, interval time.Duration) error {
	return run(ctx, m, interval, m.Log, "segment memberships: cannot trim the log")
}

func (m *Memberships) current(ctx context.Context) bool {
	r, err := m.Current(ctx)
	return err == nil && r != nil
}

func (m *Memberships) applied() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seq
}

func (m *Memberships) trim(ctx context.Context, seq int64) error {
	return m.DB.TrimMembershipChanges(ctx, seq)
}

// narrow is a segment ID as segments holds it.
func (t *membershipTable) narrow(segment int64) uint32 {
	if segment <= 0 || segment > math.MaxUint32 {
		t.wide = true
		return 0
	}
	return uint32(segment)
}

// apply records the log's changes, in order, and folds them into the
// slices when they are more than an eighth of them.
func (t *membershipTable) apply(changes []sqlite.MembershipChange) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range changes {
		if c.SegmentID != 0 {
			t.narrow(c.SegmentID)
		}
		t.changed[c.MessageID] = c.SegmentID
	}
	if len(t.changed) > 4096 && len(t.changed) > len(t.messages)/8 {
		t.fold()
	}
}

// fold rebuilds the slices with the changes in them; t.mu is held.
func (t *membershipTable) fold() {
	ids := make([]int64, 0, len(t.changed))
	for id := range t.changed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	messages := make([]int64, 0, len(t.messages)+len(ids))
	segments := make([]uint32, 0, cap(messages))
	i := 0
	for _, id := range ids {
		for ; i < len(t.messages) && t.messages[i] < id; i++ {
			messages, segments = append(messages, t.messages[i]), append(segments, t.segments[i])
		}
		if i < len(t.messages) && t.messages[i] == id {
			i++ // replaced (or removed) by the change
		}
		if seg := t.changed[id]; seg != 0 {
			messages, segments = append(messages, id), append(segments, t.narrow(seg))
		}
	}
	messages, segments = append(messages, t.messages[i:]...), append(segments, t.segments[i:]...)
	t.messages, t.segments, t.changed = slices.Clip(messages), slices.Clip(segments), map[int64]int64{}
}

// nearby is how many IDs gallop reads in order before it jumps: 8 cache
// lines.
const nearby = 64

// MembershipReader reads the memberships as they were when Current
// returned it, or later.
type MembershipReader struct{ t *membershipTable }

// Segments adds to out the segment of each of messages (ascending, each
// once) that has one.
func (r *MembershipReader) Segments(messages []int64, out map[int64]bool) {
	t := r.t
	t.mu.RLock()
	defer t.mu.RUnlock()
	from := 0 // messages ascend: each is searched for after the last
	var last int64
	add := func(seg int64) {
		if seg != last { // a conversation's messages come together: the map is most of the cost
			out[seg], last = true, seg
		}
	}
	for _, id := range messages {
		if seg, ok := t.changed[id]; ok {
			if seg != 0 {
				add(seg)
			}
			continue
		}
		i := gallop(t.messages, from, id)
		if i < len(t.messages) && t.messages[i] == id {
			add(int64(t.segments[i]))
		}
		from = i
	}
}

// gallop is the first index at or after from whose ID is at least id.
// It reads on from from for a few cache lines (a common word's messages
// are about a hundred apart, and memory read in order streams), then
// steps doubling, then searches within the last step in halves.
func gallop(ids []int64, from int, id int64) int {
	for end := min(from+nearby, len(ids)); from < end; from++ {
		if ids[from] >= id {
			return from
		}
	}
	step, hi := 1, from
	for hi < len(ids) && ids[hi] < id {
		from = hi + 1
		hi += step
		step *= 2
	}
	hi = min(hi, len(ids))
	i, _ := slices.BinarySearch(ids[from:hi], id)
	return from + i
}
