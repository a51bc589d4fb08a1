package search

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/index"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// A filter's segments are remembered for one index version only: a
// message stored after a filtered search is found by the next one.
func TestFilterCacheFollowsChanges(t *testing.T) {
	s := setup(t)
	req := Request{Query: "lasagna recipe", Keywords: []string{"lasagna"}, Mode: Pipeline,
		Filter: sqlite.Filter{Channels: []int64{games}}}
	if resp := run(t, s, req); !resp.KeywordFallback {
		t.Fatalf("before the message: want the keyword fallback, got %+v", resp)
	}
	msg := m(11, games, bob, 50*time.Hour, "my lasagna recipe needs more cheese tonight")
	if _, err := s.DB.Apply(context.Background(), &searchd.Batch{Messages: []searchd.Message{msg}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	resp := run(t, s, req)
	if resp.KeywordFallback || top(resp) != 11 {
		t.Errorf("after the message: fallback %v, top message %d; want message 11 found by its keyword", resp.KeywordFallback, top(resp))
	}
	// The unfiltered and the filtered sets are told apart.
	req.Filter = sqlite.Filter{Channels: []int64{general}}
	if resp := run(t, s, req); !resp.KeywordFallback {
		t.Errorf("in another channel: want the keyword fallback, got top message %d", top(resp))
	}
}

// A keyword no message holds beside the query's words: the lexical side
// searches without it and says so, as the semantic side does.
func TestLexicalKeywordFallback(t *testing.T) {
	bothIndexes(t, setup(t), func(t *testing.T, s *Service) {
		for _, mode := range []Mode{Lexical, Hybrid} {
			resp := run(t, s, Request{Query: "landlord lease", Keywords: []string{"xyzzy"}, Mode: mode, RankedMessages: true})
			if !resp.KeywordFallback || len(resp.RankedMessages) == 0 || resp.RankedMessages[0] != 5 {
				t.Errorf("%s: fallback %v, ranked %v; want message 5 by its words", mode, resp.KeywordFallback, resp.RankedMessages)
			}
			resp = run(t, s, Request{Query: "landlord lease", Keywords: []string{"house"}, Mode: mode, RankedMessages: true})
			if resp.KeywordFallback || len(resp.RankedMessages) == 0 || resp.RankedMessages[0] != 5 {
				t.Errorf("%s, a keyword it holds: fallback %v, ranked %v", mode, resp.KeywordFallback, resp.RankedMessages)
			}
		}
	})
}

// A segmentSet answers as the map it is made from, for the IDs in it,
// beside it and past it, as a bitmap or (IDs too sparse, or negative)
// the map, and lists and counts them.
func TestSegmentSetIsTheMap(t *testing.T) {
	for _, allow := range []map[int64]bool{
		{1: true, 2: true, 63: true, 64: true, 65: true, 200: true, 7: false},
		{5: true, 1 << 40: true, 6: false}, // too sparse for a bitmap
		{-3: true, 4: true},
		{},
	} {
		var want []int64
		for id, in := range allow {
			if in {
				want = append(want, id)
			}
		}
		slices.Sort(want)
		half := len(want) / 2
		for _, set := range []*segmentSet{newSegmentSet(allow), segmentSetOf(want), segmentSetOf(append(want, want...)),
			segmentSetOfLists([][]int64{want[:half], nil, want[half:], want})} {
			checkSegmentSet(t, set, allow, want)
		}
	}
}

func checkSegmentSet(t *testing.T, set *segmentSet, allow map[int64]bool, want []int64) {
	t.Helper()
	asked := []int64{1 << 40, 1<<40 + 1, 1 << 62} // past the bitmap
	for id := int64(-70); id < 300; id++ {
		asked = append(asked, id)
	}
	for _, id := range asked {
		if set.has(id) != allow[id] {
			t.Errorf("%v: has(%d) = %v", allow, id, set.has(id))
		}
	}
	if got := set.ids(); !slices.Equal(got, want) && len(got)+len(want) > 0 {
		t.Errorf("%v: ids %v, want %v", allow, got, want)
	}
	if set.len() != len(want) {
		t.Errorf("%v: len %d, want %d", allow, set.len(), len(want))
	}
}

// setMap is s as a map; nil (every segment) stays nil.
func setMap(s *segmentSet) map[int64]bool {
	if s == nil {
		return nil
	}
	m := map[int64]bool{}
	for _, id := range s.ids() {
		m[id] = true
	}
	return m
}

// A filter by channels alone is kept while no segment comes or goes (the
// segments' epoch), not one index version: a message that joins a
// conversation leaves it, and one that starts a conversation in a channel
// searched, or in its public thread, is searched at once; one in another
// channel or a private thread never is.
func TestChannelFilterFollowsNewSegments(t *testing.T) {
	s := setup(t)
	ctx := context.Background()
	const public, private = 201, 202
	job := &index.Job{DB: s.DB, Embedder: s.Embedder.(index.Embedder), Matrix: s.Matrix, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	apply := func(b *searchd.Batch) {
		t.Helper()
		if _, err := s.DB.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
		if err := job.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	epoch := func() int64 {
		t.Helper()
		e, err := s.DB.SegmentsEpoch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	searched := func() map[int64]bool {
		t.Helper()
		resp := run(t, s, Request{Query: "boiler plumber repair", Mode: Semantic, Limit: MaxLimit, Filter: sqlite.Filter{Channels: []int64{games}}})
		segs := map[int64]bool{}
		for _, r := range resp.Results {
			segs[r.SegmentID] = true
		}
		return segs
	}
	searched()
	before := epoch()
	apply(&searchd.Batch{Messages: []searchd.Message{m(11, games, bob, 10*time.Hour+2*time.Minute, "the boss level needs a boiler plumber")}})
	if epoch() != before || segmentOf(t, s, 11) != segmentOf(t, s, 7) {
		t.Fatalf("a message joining a conversation moved the epoch (%d → %d) or started one", before, epoch())
	}
	apply(&searchd.Batch{
		Channels: []searchd.Channel{{ID: public, ParentID: games, Kind: "GuildPublicThread"}, {ID: private, ParentID: games, Kind: "GuildPrivateThread"}},
		Messages: []searchd.Message{
			m(12, games, bob, 60*time.Hour, "the boiler broke, the plumber will repair the radiator valve"),
			m(13, general, alice, 61*time.Hour, "boiler pressure is low, call the plumber to repair the pipe"),
			m(14, public, alice, 62*time.Hour, "plumber says the boiler valve needs repair"),
			m(15, private, bob, 63*time.Hour, "boiler heating repair by the plumber tomorrow"),
		}})
	if epoch() == before {
		t.Fatal("new conversations left the epoch")
	}
	got := searched()
	for msg, want := range map[int64]bool{12: true, 13: false, 14: true, 15: false} {
		if seg := segmentOf(t, s, msg); got[seg] != want {
			t.Errorf("message %d's conversation searched: %v, want %v (results %v)", msg, got[seg], want, got)
		}
	}
	// A thread made private leaves the filter at once.
	apply(&searchd.Batch{Channels: []searchd.Channel{{ID: public, ParentID: games, Kind: "GuildPrivateThread"}}})
	if seg := segmentOf(t, s, 14); searched()[seg] {
		t.Error("a thread made private is still searched with its parent channel")
	}
}

// A filter by channels is made of each channel's segments, and a
// channel's are read again only once its messages changed: the set is
// always SQLite's for the filter, through new conversations in and out
// of the filter's channels, a public thread of one, a deletion that
// empties a conversation, and a late message that re-segments.
func TestChannelSegmentsAreSQLitesForTheFilter(t *testing.T) {
	s := setup(t)
	ctx := context.Background()
	const thread = 601
	f := sqlite.Filter{Channels: []int64{general}}
	var cs channelSegments
	check := func(when string) {
		t.Helper()
		want, err := s.DB.SegmentsMatching(ctx, "", f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cs.of(ctx, s.DB, f)
		if err != nil {
			t.Fatal(err)
		}
		if got.len() != len(want) {
			t.Fatalf("%s: %d segments; SQLite's filter holds %d", when, got.len(), len(want))
		}
		for _, id := range want {
			if !got.has(id) {
				t.Fatalf("%s: segment %d of the filter is missing", when, id)
			}
		}
	}
	apply := func(b searchd.Batch) {
		t.Helper()
		if _, err := s.DB.Apply(ctx, &b, segment.DefaultRules, nil); err != nil {
			t.Fatal(err)
		}
	}
	check("at first")
	apply(searchd.Batch{Messages: []searchd.Message{m(50, general, bob, 60*time.Hour, "a new conversation here")}})
	check("a new conversation in the channel")
	apply(searchd.Batch{Messages: []searchd.Message{m(51, games, bob, 61*time.Hour, "one elsewhere")}})
	check("a new conversation elsewhere")
	apply(searchd.Batch{Channels: []searchd.Channel{{ID: thread, GuildID: 9, ParentID: general, Name: "t", Kind: "GuildPublicThread"}},
		Messages: []searchd.Message{m(52, thread, alice, 62*time.Hour, "in a public thread")}})
	check("a public thread of the channel")
	apply(searchd.Batch{Deletes: []int64{50}})
	check("a conversation emptied")
	apply(searchd.Batch{Messages: []searchd.Message{m(53, general, alice, 30*time.Hour+time.Minute, "a late reply")}})
	check("a late message")
}
