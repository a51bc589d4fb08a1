package search

import (
	"context"
	"testing"

	"dsearch/searchd"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// A segment whose messages were deleted, forgotten or opted out never
// ranks by its old text, though the embedding job has not run since: the
// in-memory matrix still holds the vector of the old text until then.
func TestRemovedTextNeverRanksBeforeReembedding(t *testing.T) {
	ctx := context.Background()
	const plumbing = "call a plumber to repair the heating pipes and the pressure valve" // message 2, bob's
	const gameTalk = "finished the game, the ending and the story were great, steam has the game on sale"
	for _, tc := range []struct {
		name, query string
		msg         int64 // a message of the segment that must not rank
		remove      func(db *sqlite.DB) error
	}{
		{"deleted message", plumbing, 2, func(db *sqlite.DB) error {
			_, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{2}}, segment.DefaultRules, nil)
			return err
		}},
		{"forgotten author", plumbing, 2, func(db *sqlite.DB) error {
			_, err := db.Forget(ctx, sqlite.ForgetFilter{Author: bob}, segment.DefaultRules)
			return err
		}},
		{"opted out", plumbing, 2, func(db *sqlite.DB) error {
			_, err := db.OptOut(ctx, bob, segment.DefaultRules)
			return err
		}},
		{"forgotten channel", gameTalk, 6, func(db *sqlite.DB) error {
			_, err := db.Forget(ctx, sqlite.ForgetFilter{Channel: games}, segment.DefaultRules)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := setup(t)
			seg := segmentOf(t, s, tc.msg)
			kept := segmentOf(t, s, 9) // alice's alone, in no case removed
			if s.Matrix.Vector(kept) == nil {
				t.Fatalf("segment %d has no vector", kept)
			}
			if !ranks(t, s, Semantic, tc.query, seg) {
				t.Fatalf("before: segment %d does not rank for %q", seg, tc.query)
			}
			if err := tc.remove(s.DB); err != nil {
				t.Fatal(err)
			}
			for _, mode := range []Mode{Semantic, Pipeline, Hybrid} {
				if ranks(t, s, mode, tc.query, seg) {
					t.Errorf("%s: segment %d ranks by the vector of the text removed from it", mode, seg)
				}
			}
			if s.Matrix.Vector(kept) == nil {
				t.Errorf("segment %d, unchanged, left the matrix", kept)
			}
		})
	}
}

// ranks says whether seg is among a search's results by its vector (its
// remaining text may still match words of the query, as any text does).
func ranks(t *testing.T, s *Service, mode Mode, query string, seg int64) bool {
	t.Helper()
	for _, r := range run(t, s, Request{Query: query, Mode: mode, Limit: 50}).Results {
		if r.SegmentID == seg && r.Components["semantic"].Rank > 0 {
			return true
		}
	}
	return false
}
