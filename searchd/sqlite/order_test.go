package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// history makes one channel's messages in time order: quiet talk with
// silences of minutes, hours and days, and bursts where a dozen people
// talk at once (busy), with replies and mentions.
func history(seed uint64, n int) []searchd.Message {
	rng := rand.New(rand.NewPCG(seed, 1))
	at := t0
	out := make([]searchd.Message, 0, n)
	burst := 0
	for i := range n {
		switch r := rng.Float64(); {
		case burst > 0:
			burst--
			at = at.Add(time.Duration(rng.IntN(20)+1) * time.Second)
		case r < 0.02:
			burst = 40 + rng.IntN(80)
		case r < 0.06:
			at = at.Add(time.Duration(rng.IntN(72)+1) * time.Hour)
		case r < 0.15:
			at = at.Add(time.Duration(rng.IntN(120)+20) * time.Minute)
		case r < 0.2:
			// the same instant as the message before
		default:
			at = at.Add(time.Duration(rng.IntN(600)+1) * time.Second)
		}
		authors := 3
		if burst > 0 {
			authors = 12
		}
		m := searchd.Message{ID: int64(1000 + i), ChannelID: 100, CreatedAt: at.UnixMicro(), Type: "Default",
			Content: words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))] + questions[rng.IntN(len(questions))],
			Author:  searchd.Author{ID: int64(rng.IntN(authors) + 1), Username: "u"}}
		if i > 0 && rng.Float64() < 0.15 {
			m.ReplyToID = int64(1000 + i - 1 - rng.IntN(min(i, 60)))
			m.Type = "Reply"
		}
		if rng.Float64() < 0.2 {
			m.Mentions = []int64{int64(rng.IntN(authors) + 1)}
		}
		if rng.Float64() < 0.02 {
			m.Type = "GuildMemberJoin"
		}
		out = append(out, m)
	}
	return out
}

// words and questions vary the histories' lines, so that the linker's
// word overlap and question shape come into play.
var (
	words     = []string{"game", "boiler", "pizza", "trip", "keyboard", "driver", "beach", "movie", "btw", "근데", "이사"}
	questions = []string{"", "", "?"}
)

// partition is a segmentation as sets of message IDs, independent of
// segment row IDs.
func partition(t *testing.T, db *DB) []string {
	t.Helper()
	var out []string
	for _, seg := range membership(t, db) {
		slices.Sort(seg)
		out = append(out, fmt.Sprint(seg))
	}
	slices.Sort(out)
	return out
}

func applyAll(t *testing.T, db *DB, rules segment.Rules, batches [][]searchd.Message) {
	t.Helper()
	for _, b := range batches {
		if _, err := db.Apply(context.Background(), &searchd.Batch{Messages: b}, rules, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// backfillOrder is how the bot delivers history: the newest messages live,
// then pages of up to 100 going back in time, each newest first.
func backfillOrder(msgs []searchd.Message, live int) [][]searchd.Message {
	var out [][]searchd.Message
	for _, m := range msgs[len(msgs)-live:] {
		out = append(out, []searchd.Message{m})
	}
	for end := len(msgs) - live; end > 0; end -= 100 {
		page := slices.Clone(msgs[max(0, end-100):end])
		slices.Reverse(page)
		out = append(out, page)
	}
	return out
}

// shuffledOrder delivers the messages in random order, in batches of
// random sizes.
func shuffledOrder(msgs []searchd.Message, seed uint64) [][]searchd.Message {
	rng := rand.New(rand.NewPCG(seed, 2))
	all := slices.Clone(msgs)
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	var out [][]searchd.Message
	for len(all) > 0 {
		n := min(len(all), 1+rng.IntN(40))
		out = append(out, all[:n])
		all = all[n:]
	}
	return out
}

// Segmentation must not depend on the order history arrives in: the bot's
// backfill (pages going back in time after live messages) and any shuffle
// give the segments of an in-order import.
func TestSegmentationIgnoresArrivalOrder(t *testing.T) {
	for _, rules := range []segment.Rules{segment.DefaultRules, segment.BlogRules} {
		for seed := range uint64(6) {
			msgs := history(seed, 700)
			inOrder := openTest(t)
			var batches [][]searchd.Message
			for i := 0; i < len(msgs); i += 100 {
				batches = append(batches, msgs[i:min(i+100, len(msgs))])
			}
			applyAll(t, inOrder, rules, batches)
			want := partition(t, inOrder)
			for name, order := range map[string][][]searchd.Message{
				"backfill": backfillOrder(msgs, 30),
				"shuffled": shuffledOrder(msgs, seed),
			} {
				t.Run(fmt.Sprintf("linker=%v/seed=%d/%s", rules.Linker != nil, seed, name), func(t *testing.T) {
					db := openTest(t)
					applyAll(t, db, rules, order)
					if got := partition(t, db); !slices.Equal(got, want) {
						t.Errorf("%d segments, want the in-order import's %d", len(got), len(want))
					}
					checkSegments(t, db)
				})
			}
		}
	}
}

type segRow struct {
	revision int64
	members  string
}

func segRows(t *testing.T, db *DB) map[int64]segRow {
	t.Helper()
	rows, err := db.db.Query(`SELECT s.id, s.revision, group_concat(ms.message_id) FROM segments s
		JOIN (SELECT * FROM message_segments ORDER BY message_id) ms ON ms.segment_id = s.id GROUP BY s.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]segRow{}
	for rows.Next() {
		var id int64
		var r segRow
		if err := rows.Scan(&id, &r.revision, &r.members); err != nil {
			t.Fatal(err)
		}
		out[id] = r
	}
	return out
}

// A late message re-segments only what it changes: every other segment
// keeps its row and revision, so only changed conversations are embedded
// again.
func TestLateMessageKeepsUnchangedSegments(t *testing.T) {
	for seed := range uint64(6) {
		msgs := history(seed, 700)
		late := msgs[350]
		db := openTest(t)
		applyAll(t, db, segment.DefaultRules, [][]searchd.Message{slices.Delete(slices.Clone(msgs), 350, 351)})
		before := segRows(t, db)
		applyAll(t, db, segment.DefaultRules, [][]searchd.Message{{late}})
		after := segRows(t, db)
		changed := 0
		for id, a := range after {
			b, ok := before[id]
			switch {
			case ok && a.members == b.members && a.revision != b.revision:
				t.Errorf("seed %d: segment %d kept its members but got revision %d (was %d)", seed, id, a.revision, b.revision)
			case !ok || a.members != b.members:
				changed++
				if ok && a.revision == b.revision {
					t.Errorf("seed %d: segment %d changed members, kept revision %d", seed, id, a.revision)
				}
			}
		}
		// A late line changes its own conversation and, through the
		// links of the lines after it within the linker's window, a few
		// more; the old rules changed at most 3.
		t.Logf("seed %d: %d of %d segments re-made", seed, changed, len(after))
		if changed == 0 || changed > 6 {
			t.Errorf("seed %d: %d of %d segments re-made for one late message", seed, changed, len(after))
		}
		inOrder := openTest(t)
		applyAll(t, inOrder, segment.DefaultRules, [][]searchd.Message{msgs})
		if !slices.Equal(partition(t, db), partition(t, inOrder)) {
			t.Errorf("seed %d: segments differ from an in-order import", seed)
		}
	}
}
