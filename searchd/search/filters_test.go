package search

import (
	"context"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
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
		for _, set := range []*segmentSet{newSegmentSet(allow), segmentSetOf(want), segmentSetOf(append(want, want...))} {
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
