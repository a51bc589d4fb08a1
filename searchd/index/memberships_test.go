package index

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// sameMemberships checks that the memberships in memory are the
// database's, message by message (and that none is invented for the
// unknown IDs).
func sameMemberships(t *testing.T, db *sqlite.DB, m *Memberships, ids []int64) {
	t.Helper()
	ctx := context.Background()
	r, err := m.Current(ctx)
	if err != nil || r == nil {
		t.Fatalf("not current: %v", err)
	}
	want, err := db.SegmentsOf(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range append(slices.Clone(ids), -7, 1<<40) {
		got := map[int64]bool{}
		r.Segments([]int64{id}, got)
		seg, ok := want[id]
		if ok && seg == 0 {
			ok = false // SegmentsOf's 0: stored, in no segment
		}
		if ok != (len(got) == 1) || ok && !got[seg] {
			t.Errorf("message %d: in memory %v, stored %d (%v)", id, slices.Collect(maps.Keys(got)), seg, ok)
		}
	}
	all := map[int64]bool{}
	sorted := slices.Sorted(slices.Values(ids))
	r.Segments(sorted, all)
	wantAll := map[int64]bool{}
	for _, seg := range want {
		if seg != 0 {
			wantAll[seg] = true
		}
	}
	if !maps.Equal(all, wantAll) {
		t.Errorf("all at once: %d segments, stored %d", len(all), len(wantAll))
	}
	if n := m.Len(); n != len(want)-countZero(want) {
		t.Errorf("Len %d, stored %d", n, len(want)-countZero(want))
	}
}

func countZero(m map[int64]int64) int {
	n := 0
	for _, v := range m {
		if v == 0 {
			n++
		}
	}
	return n
}

// The memberships follow every writer of message_segments through the
// log the applier and the table's triggers fill: new messages, a late message that re-segments
// the channel (messages move, segments go), edits, deletions, forgetting
// a channel and an author, an opt-out; after the log is trimmed; and by
// loading again when the backlog is too long.
func TestMembershipsFollowEveryWriter(t *testing.T) {
	db := setup(t)
	ctx := context.Background()
	m := &Memberships{DB: db}
	if err := m.Load(ctx); err != nil {
		t.Fatal(err)
	}
	ids := []int64{1, 2, 3, 4, 5, 6}
	sameMemberships(t, db, m, ids)
	apply := func(what string, b *searchd.Batch) {
		t.Helper()
		if _, err := db.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
		for _, msg := range b.Messages {
			if !slices.Contains(ids, msg.ID) {
				ids = append(ids, msg.ID)
			}
		}
		t.Run(what, func(t *testing.T) { sameMemberships(t, db, m, ids) })
	}
	segsOf := func() map[int64]int64 {
		s, err := db.SegmentsOf(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	apply("new messages", &searchd.Batch{Messages: []searchd.Message{
		msg(10, 9*time.Hour, "new conversation about the boiler"),
		msg(11, 9*time.Hour+time.Minute, "the plumber again"),
		msg(12, 11*time.Hour, "later, about the game"),
		msg(13, 11*time.Hour+time.Minute, "the game ending"),
	}})
	before := segsOf()
	// Messages filling the quiet hours between 2 and 5 h join the
	// conversations on both sides: the later ones move.
	var bridge []searchd.Message
	for i, at := 0, 2*time.Hour+20*time.Minute; at < 5*time.Hour; i, at = i+1, at+20*time.Minute {
		bridge = append(bridge, msg(int64(20+i), at, "still talking about the boiler and the game"))
	}
	apply("a late batch that re-segments the channel", &searchd.Batch{Messages: bridge})
	moved := 0
	for id, seg := range segsOf() {
		if old, ok := before[id]; ok && old != seg {
			moved++
		}
	}
	if moved == 0 {
		t.Error("the late batch moved no message: re-segmentation was not tried")
	}
	// A late message just before a long conversation starts it anew:
	// replaying from it converges, and the rest of the conversation is
	// relabelled onto the re-made segment.
	var long []searchd.Message
	for i := range 40 {
		long = append(long, msg(int64(100+i), 40*time.Hour+time.Duration(i)*time.Minute, "a long talk about the boiler"))
	}
	apply("a long conversation", &searchd.Batch{Messages: long})
	before = segsOf()
	apply("a late message just before it", &searchd.Batch{Messages: []searchd.Message{
		msg(99, 40*time.Hour-10*time.Minute, "late, about the boiler")}})
	moved = 0
	for id, seg := range segsOf() {
		if old, ok := before[id]; ok && old != seg {
			moved++
		}
	}
	if moved == 0 {
		t.Error("the late message moved no message: relabelling was not tried")
	}
	edited := msg(2, time.Minute, "the plumber comes tomorrow instead")
	edited.EditedAt = t0.Add(time.Hour).UnixMicro()
	apply("an edit", &searchd.Batch{Messages: []searchd.Message{edited}})
	apply("deletions", &searchd.Batch{Deletes: []int64{1, 21}})

	seq, err := db.MembershipSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.TrimMembershipChanges(ctx, seq); err != nil {
		t.Fatal(err)
	}
	apply("after trimming the log", &searchd.Batch{Messages: []searchd.Message{msg(30, 20*time.Hour, "a message after the trim")}})
	if after, _ := db.MembershipSeq(ctx); after <= seq {
		t.Errorf("the log's last entry %d after trimming to %d and a new message: entries must keep rising", after, seq)
	}

	other := msg(40, 21*time.Hour, "in another channel")
	other.ChannelID = 2
	apply("another channel", &searchd.Batch{Messages: []searchd.Message{other}})
	if _, err := db.Forget(ctx, sqlite.ForgetFilter{Channel: 2}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	t.Run("forgetting a channel", func(t *testing.T) { sameMemberships(t, db, m, ids) })
	someone := msg(41, 22*time.Hour, "someone else speaks")
	someone.Author = searchd.Author{ID: 9, Username: "b"}
	apply("someone else", &searchd.Batch{Messages: []searchd.Message{someone}})
	if _, err := db.OptOut(ctx, 9, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	t.Run("an opt-out", func(t *testing.T) { sameMemberships(t, db, m, ids) })
	if _, err := db.Forget(ctx, sqlite.ForgetFilter{Before: t0.Add(3 * time.Hour).UnixMicro()}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	t.Run("forgetting the oldest", func(t *testing.T) { sameMemberships(t, db, m, ids) })

	// A backlog past MaxCatchUp: Current says "not now" and loads again.
	m.MaxCatchUp = 1
	apply2 := &searchd.Batch{Messages: []searchd.Message{msg(50, 30*time.Hour, "one"), msg(51, 30*time.Hour+time.Minute, "two")}}
	if _, err := db.Apply(ctx, apply2, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, 50, 51)
	if r, err := m.Current(ctx); err != nil || r != nil {
		t.Fatalf("a backlog of 2 past MaxCatchUp 1: want nil while loading again, got %v, %v", r, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for m.reloading.Load() || m.ready.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the memberships did not load again")
		}
		time.Sleep(5 * time.Millisecond)
	}
	sameMemberships(t, db, m, ids)
}

// Changes are folded into the sorted lists once they are more than an
// eighth of them; look-ups agree before and after.
func TestMembershipTableFolds(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tab := &membershipTable{changed: map[int64]int64{}}
	want := map[int64]int64{}
	for id := int64(1); id <= 40000; id++ {
		if r.IntN(3) > 0 {
			seg := 1 + id/10
			tab.messages, tab.segments = append(tab.messages, id*7), append(tab.segments, uint32(seg))
			want[id*7] = seg
		}
	}
	folded := false
	for round := 0; round < 40; round++ {
		var changes []sqlite.MembershipChange
		for range 500 {
			id := int64(r.IntN(45000)) * 7
			seg := int64(0)
			if r.IntN(4) > 0 {
				seg = 1 + int64(r.IntN(9000))
			}
			changes = append(changes, sqlite.MembershipChange{MessageID: id, SegmentID: seg})
			if seg == 0 {
				delete(want, id)
			} else {
				want[id] = seg
			}
		}
		tab.apply(changes)
		folded = folded || len(tab.changed) == 0
		reader := &MembershipReader{tab}
		ids := make([]int64, 0, 2000)
		for range 2000 {
			ids = append(ids, int64(r.IntN(46000))*7+int64(r.IntN(2)))
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		got := map[int64]bool{}
		reader.Segments(ids, got)
		expect := map[int64]bool{}
		for _, id := range ids {
			if seg, ok := want[id]; ok {
				expect[seg] = true
			}
		}
		if !maps.Equal(got, expect) {
			t.Fatalf("round %d: %d segments, want %d", round, len(got), len(expect))
		}
	}
	if !folded {
		t.Error("the changes were never folded into the lists")
	}
	if !slices.IsSorted(tab.messages) {
		t.Error("the folded messages are out of order")
	}
}

// gallop finds the first ID at or after the one asked, from anywhere.
func TestGallop(t *testing.T) {
	ids := []int64{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}
	for from := range len(ids) + 1 {
		for id := int64(0); id <= 22; id++ {
			want := from + func() int { i, _ := slices.BinarySearch(ids[from:], id); return i }()
			if got := gallop(ids, from, id); got != want {
				t.Errorf("gallop(from %d, %d) = %d, want %d", from, id, got, want)
			}
		}
	}
}

// BenchmarkMembershipSegments maps a common word's messages (7,412 of
// 650,000 hold "game" in the benchmark corpus: 1.14 %) to their segments
// (a segment per 8.5 messages), at 650,000 messages and at 6.5 M.
func BenchmarkMembershipSegments(b *testing.B) {
	for _, n := range []int{650_000, 6_500_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 6))
			tab := &membershipTable{changed: map[int64]int64{}, messages: make([]int64, n), segments: make([]uint32, n)}
			id := int64(1) << 50
			var holding []int64
			for i := range n {
				id += 1 + r.Int64N(1<<30) // snowflakes, seconds apart
				tab.messages[i], tab.segments[i] = id, uint32(1+i*2/17)
				if r.IntN(10000) < 114 {
					holding = append(holding, id)
				}
			}
			reader := &MembershipReader{tab}
			b.ResetTimer()
			for range b.N {
				segs := make(map[int64]bool, len(holding))
				reader.Segments(holding, segs)
			}
			b.ReportMetric(float64(len(holding)), "messages")
		})
	}
}

// Run loads the memberships, follows the log and trims what it has
// applied, down to the last entry, which stays.
func TestMembershipsRunTrimsTheLog(t *testing.T) {
	db := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	m := &Memberships{DB: db}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, 5*time.Millisecond) }()
	if _, err := db.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{
		msg(60, 50*time.Hour, "one more"), msg(61, 50*time.Hour+time.Minute, "and another"),
	}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		changes, err := db.MembershipChanges(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) == 1 {
			if seq, _ := db.MembershipSeq(ctx); changes[0].Seq != seq {
				t.Errorf("the entry kept is %d, the last is %d", changes[0].Seq, seq)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log still holds %d entries", len(changes))
		}
		time.Sleep(5 * time.Millisecond)
	}
	sameMemberships(t, db, m, []int64{1, 2, 3, 4, 5, 6, 60, 61})
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
