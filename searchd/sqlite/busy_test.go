package sqlite

import (
	"reflect"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// busyChannel fills channel 100 with a minute of chatter by eight people,
// one message every 5 seconds, so that the channel counts as busy; the
// messages under test follow.
func busyChannel(t *testing.T, db *DB) {
	t.Helper()
	var msgs []searchd.Message
	for i := int64(0); i < 12; i++ {
		m := msg(900+i, time.Duration(i)*5*time.Second, 0)
		m.Author = searchd.Author{ID: 50 + i%8, Username: "crowd"}
		msgs = append(msgs, m)
	}
	apply(t, db, msgs...)
}

// by makes a message by author at base+offset.
func by(id, author int64, offset time.Duration, mentions ...int64) searchd.Message {
	m := msg(id, time.Minute+offset, 0)
	m.Author = searchd.Author{ID: author, Username: "u"}
	m.Mentions = mentions
	return m
}

func segs(t *testing.T, db *DB, ids ...int64) []int64 {
	t.Helper()
	got, err := db.SegmentsOf(t.Context(), ids)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = got[id]
	}
	return out
}

func TestBusySignals(t *testing.T) {
	t.Run("addressee", func(t *testing.T) {
		db := openTest(t)
		busyChannel(t, db)
		// 1 asks; others talk; 3 names author 1 and joins 1's conversation.
		apply(t, db, by(1, 1, 0), by(2, 2, 10*time.Second), by(3, 3, 20*time.Second, 1))
		s := segs(t, db, 1, 2, 3)
		if s[2] != s[0] || s[1] == s[0] {
			t.Errorf("segments %v: 3 should join 1's, 2 stand apart", s)
		}
	})
	t.Run("addressed by", func(t *testing.T) {
		db := openTest(t)
		busyChannel(t, db)
		// 2 names 1; 1 answers without naming anyone: same conversation.
		apply(t, db, by(1, 2, 0, 1), by(2, 3, 10*time.Second), by(3, 1, 20*time.Second))
		s := segs(t, db, 1, 2, 3)
		if s[2] != s[0] || s[1] == s[0] {
			t.Errorf("segments %v: 3 answers 1's mention", s)
		}
	})
	t.Run("own continuity and pace", func(t *testing.T) {
		db := openTest(t)
		busyChannel(t, db)
		// 1 writes two lines; much later (past the attention span, which
		// follows the channel's 5-second pace) 1 starts something new.
		apply(t, db, by(1, 1, 0), by(2, 1, 20*time.Second), by(3, 1, 20*time.Minute))
		s := segs(t, db, 1, 2, 3)
		if s[1] != s[0] || s[2] == s[0] {
			t.Errorf("segments %v", s)
		}
	})
	t.Run("reply", func(t *testing.T) {
		db := openTest(t)
		busyChannel(t, db)
		r := by(2, 2, 30*time.Second)
		r.ReplyToID = 1
		apply(t, db, by(1, 1, 0), by(3, 3, 10*time.Second), r)
		s := segs(t, db, 1, 2, 3)
		if s[1] != s[0] || s[2] == s[0] {
			t.Errorf("segments %v: the reply joins its parent", s)
		}
	})
	t.Run("unrelated lines start conversations", func(t *testing.T) {
		db := openTest(t)
		busyChannel(t, db)
		apply(t, db, by(1, 1, 0), by(2, 2, 5*time.Second), by(3, 3, 10*time.Second))
		s := segs(t, db, 1, 2, 3)
		if s[0] == s[1] || s[1] == s[2] || s[0] == s[2] {
			t.Errorf("segments %v: three strangers, three conversations", s)
		}
	})
	t.Run("system messages stand alone", func(t *testing.T) {
		db := openTest(t)
		busyChannel(t, db)
		join := by(2, 1, 5*time.Second)
		join.Type = "GuildMemberJoin"
		apply(t, db, by(1, 1, 0), join, by(3, 1, 10*time.Second))
		s := segs(t, db, 1, 2, 3)
		if s[1] == s[0] || s[2] != s[0] {
			t.Errorf("segments %v: the join stands alone and does not count as 1's own line", s)
		}
	})
}

// A quiet channel (two people, as a group of friends) keeps the blog's
// rules under the default rules: the same segments as BlogRules give.
func TestQuietChannelKeepsBlogRules(t *testing.T) {
	msgs := []searchd.Message{
		msg(1, 0, 0), msg(2, time.Minute, 0), msg(3, 41*time.Minute, 0), msg(4, 45*time.Minute, 0),
		msg(5, 5*time.Hour, 1), msg(6, 5*time.Hour+time.Minute, 0),
	}
	for i := range msgs {
		msgs[i].Author = searchd.Author{ID: int64(1 + i%2), Username: "friend"}
		msgs[i].Mentions = []int64{int64(2 - i%2)} // they even name each other
	}
	var got [2][][]int64
	for i, rules := range []segment.Rules{segment.DefaultRules, segment.BlogRules} {
		db := openTest(t)
		if _, err := db.Apply(t.Context(), &searchd.Batch{Messages: msgs}, rules, nil); err != nil {
			t.Fatal(err)
		}
		got[i] = membership(t, db)
	}
	if !reflect.DeepEqual(got[0], got[1]) || !reflect.DeepEqual(got[1], [][]int64{{1, 2, 5, 6}, {3, 4}}) {
		t.Errorf("default %v, blog %v", got[0], got[1])
	}
}

func TestWasBusy(t *testing.T) {
	r := segment.DefaultRules
	min := time.Minute.Microseconds()
	var authors, times []int64
	for i := int64(0); i < 6; i++ { // six people within four minutes
		authors = append(authors, i)
		times = append(times, i*48*1e6)
	}
	if !segment.WasBusy(authors, times, times[5]+1, r) {
		t.Error("six authors in four minutes: not busy")
	}
	if segment.WasBusy(authors[:5], times[:5], times[4]+1, r) {
		t.Error("five authors: busy")
	}
	spread := []int64{0, 6 * min, 12 * min, 18 * min, 24 * min, 29 * min}
	if segment.WasBusy(authors, spread, spread[5]+1, r) {
		t.Error("six authors over half an hour: busy")
	}
	if segment.WasBusy(authors, times, times[5]+31*min, r) {
		t.Error("busy half an hour ago still counts")
	}
	if !segment.WasBusy(authors, times, times[5]+10*min, r) {
		t.Error("a ten-minute lull forgot a busy channel")
	}
}
