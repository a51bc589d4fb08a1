package search

import (
	"context"
	"testing"
	"time"

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

// A result's confidence is judged against the conversations of the
// channels searched (the two most similar, and their spread), and a
// deleted conversation is not one of them, though the embedding job has
// not run since: where a filter keeps it out of the results (an
// author's) while its channel is searched, its vector set the result's
// standout and closeness, so whether a result was marked confident
// depended on text that was deleted.
func TestDeletedConversationJudgesNoResult(t *testing.T) {
	ctx := context.Background()
	const query = "pizza and beer for dinner at the restaurant" // message 10, bob's, alone in its conversation
	req := Request{Query: query, Mode: Semantic, Limit: 5, Filter: sqlite.Filter{Authors: []int64{alice}}}

	// Reference: message 10 deleted, and the matrix current.
	fresh := setupWith(t, moreConversations())
	gone := segmentOf(t, fresh, 10)
	if _, err := fresh.DB.Apply(ctx, &searchd.Batch{Deletes: []int64{10}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	fresh.Matrix.Delete(gone) // as the embedding job's next pass does
	want := run(t, fresh, req)

	// Message 10 deleted; the embedding job has not run yet.
	s := setupWith(t, moreConversations())
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Deletes: []int64{10}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	got := run(t, s, req)
	if len(got.Results) != len(want.Results) {
		t.Fatalf("%d results, want %d", len(got.Results), len(want.Results))
	}
	for i := range want.Results {
		g, w := got.Results[i], want.Results[i]
		if g.SegmentID != w.SegmentID || g.Confidence.Standout != w.Confidence.Standout ||
			g.Confidence.Closeness != w.Confidence.Closeness || g.Confidence.High != w.Confidence.High || g.Confidence.Evidence.N != w.Confidence.Evidence.N {
			t.Errorf("result %d judged with the deleted text's vector: segment %d %+v; without it: segment %d %+v",
				i, g.SegmentID, g.Confidence, w.SegmentID, w.Confidence)
		}
	}
}

// moreConversations is the corpus with more conversations, enough to judge
// confidence by (minSpread).
func moreConversations() []searchd.Message {
	out := append([]searchd.Message(nil), corpus...)
	for i, text := range []string{
		"the printer at work jams on every second page again",
		"we should book the train tickets for the holiday early",
		"my cat knocked the plant off the shelf last night",
		"the football match went to penalties and we lost",
		"learning to bake sourdough bread takes patience",
		"the new phone battery lasts two full days now",
		"rain all week, the garden finally looks green",
		"the dentist appointment moved to thursday morning",
		"our team shipped the release after a long week",
		"the bike tyre was flat so I walked to the station",
	} {
		out = append(out, m(int64(20+i), general, alice, time.Duration(50+10*i)*time.Hour, text))
	}
	return out
}
