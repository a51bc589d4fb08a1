package sqlite

import (
	"reflect"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// busyChannel fills channel 100 with a minute of chatter by eight people,
// one message every 5 seconds; the messages under test follow.
func busyChannel(t *testing.T, db *DB) {
	t.Helper()
	var msgs []searchd.Message
	for i := int64(0); i < 12; i++ {
		m := msg(900+i, time.Duration(i)*5*time.Second, 0)
		m.Author = searchd.Author{ID: 50 + i%8, Username: "crowd"}
		m.Content = "chatter about something else entirely"
		msgs = append(msgs, m)
	}
	apply(t, db, msgs...)
}

// by makes a message by author at base+offset.
func by(id, author int64, offset time.Duration, content string, mentions ...int64) searchd.Message {
	m := msg(id, time.Minute+offset, 0)
	m.Author = searchd.Author{ID: author, Username: "u"}
	m.Content = content
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

func TestLinkSignals(t *testing.T) {
	t.Run("addressee", func(t *testing.T) {
		db := openTest(t)
		busyChannel(t, db)
		// 1 asks; 2 starts something else; 3 names author 1 and joins 1's conversation.
		apply(t, db, by(1, 1, 0, "how do I mount a usb drive?"), by(2, 2, 10*time.Second, "anyone watching the game tonight"),
			by(3, 3, 20*time.Second, "try the disks app", 1))
		s := segs(t, db, 1, 2, 3)
		if s[2] != s[0] || s[1] == s[0] {
			t.Errorf("segments %v: 3 should join 1's, 2 stand apart", s)
		}
	})
	t.Run("reply", func(t *testing.T) {
		db := openTest(t)
		busyChannel(t, db)
		r := by(2, 2, 30*time.Second, "same here")
		r.ReplyToID = 1
		apply(t, db, by(1, 1, 0, "my boiler broke"), by(3, 3, 10*time.Second, "who is up for pizza", 50), r)
		s := segs(t, db, 1, 2, 3)
		if s[1] != s[0] || s[2] == s[0] {
			t.Errorf("segments %v: the reply joins its parent", s)
		}
	})
	t.Run("system messages stand alone", func(t *testing.T) {
		db := openTest(t)
		busyChannel(t, db)
		join := by(2, 1, 5*time.Second, "")
		join.Type = "GuildMemberJoin"
		apply(t, db, by(1, 1, 0, "setting up my new keyboard"), join, by(3, 1, 10*time.Second, "the keyboard needs a driver"))
		s := segs(t, db, 1, 2, 3)
		if s[1] == s[0] || s[2] != s[0] {
			t.Errorf("segments %v: the join stands alone", s)
		}
	})
	t.Run("silence", func(t *testing.T) {
		db := openTest(t)
		apply(t, db, by(1, 1, 0, "did you see the game"), by(2, 2, 10*time.Second, "yes what a finish"),
			by(3, 1, 3*time.Hour, "did you see the game"))
		s := segs(t, db, 1, 2, 3)
		if s[1] != s[0] || s[2] == s[0] {
			t.Errorf("segments %v: a line hours later, past the linker's horizon, starts a conversation", s)
		}
	})
}

// The blog's example: two people, five messages in 70 seconds, two
// topics. 2002 starts B's thread ("oh btw"), 2005 answers A's own 2001.
// The Korean post has the same example in Korean.
var blogExamples = map[string][5]string{
	"en": {"this really should go on sale", "oh btw there's a new edition out", "maybe i'll buy it used", "wait no, i was given one", "ended up paying full price"},
	"ko": {"이거 할인 좀 하지", "아 근데 새 패키지 나왔더라", "중고로 살까", "아니다 선물받은 거 있었지", "결국 정가 주고 샀음"},
}

func blogExample(lang string) []searchd.Message {
	a, b := searchd.Author{ID: 1, Username: "a", GlobalName: "A"}, searchd.Author{ID: 2, Username: "b", GlobalName: "B"}
	who := []searchd.Author{a, b, b, b, a}
	var out []searchd.Message
	for i, text := range blogExamples[lang] {
		m := msg(int64(2001+i), 0, 0)
		m.Author, m.Content = who[i], text
		out = append(out, m)
	}
	return out
}

func TestBlogExampleIsTwoConversations(t *testing.T) {
	s := time.Second
	// The post's minute stamps (15:02 four times, then 15:03), and spreads
	// over 70 and 10 seconds.
	for _, at := range [][]time.Duration{{0, 0, 0, 0, 60 * s}, {0, 10 * s, 25 * s, 40 * s, 70 * s}, {0, s, 2 * s, 3 * s, 10 * s}} {
		for _, lang := range []string{"en", "ko"} {
			msgs := blogExample(lang)
			for i := range msgs {
				msgs[i].CreatedAt = t0.Add(at[i]).UnixMicro()
			}
			db := openTest(t)
			apply(t, db, msgs...)
			if got, want := membership(t, db), [][]int64{{2001, 2005}, {2002, 2003, 2004}}; !reflect.DeepEqual(got, want) {
				t.Errorf("%s at %v: segments %v, want %v", lang, at, got, want)
			}
		}
	}
}

// Friends taking turns in a quiet channel stay one conversation until a
// silence past the linker's horizon; the blog's rules agree.
func TestFriendsTakingTurns(t *testing.T) {
	texts := []string{"hey, how was the trip?", "great! the beach was amazing", "did you go swimming?", "every day, the water was warm",
		"jealous, it rained here all week", "hey are you free saturday?", "yes, what's up?"}
	offsets := []time.Duration{0, time.Minute, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 5 * time.Hour, 5*time.Hour + time.Minute}
	var msgs []searchd.Message
	for i, text := range texts {
		m := msg(int64(i+1), offsets[i], 0)
		m.Author = searchd.Author{ID: int64(1 + i%2), Username: "friend"}
		m.Content = text
		msgs = append(msgs, m)
	}
	for _, rules := range []segment.Rules{segment.DefaultRules, segment.BlogRules} {
		db := openTest(t)
		if _, err := db.Apply(t.Context(), &searchd.Batch{Messages: msgs}, rules, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := membership(t, db), [][]int64{{1, 2, 3, 4, 5}, {6, 7}}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: segments %v, want %v", rules.Name(), got, want)
		}
	}
}

// Placements explain each linker decision with the chosen option's
// probability, which placing leaves out (segment.Linker.Explain).
func TestPlacementsGiveProbability(t *testing.T) {
	db := openTest(t)
	msgs := blogExample("en")
	apply(t, db, msgs...)
	var ids []int64
	for _, m := range msgs {
		ids = append(ids, m.ID)
	}
	got, err := db.Placements(t.Context(), segment.DefaultRules, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[1:] {
		p := got[id]
		if p.Kind != "link" && p.Kind != "new" || !(p.Prob > 0 && p.Prob <= 1) {
			t.Errorf("message %d: %+v, want a linker decision with its probability", id, p)
		}
	}
}
