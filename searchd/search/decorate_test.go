package search

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A keyword hit is shown with the messages just before and after it in
// its channel, as the message endpoint's neighbours are: at a channel's
// ends, across conversations, and between messages sent in the same
// microsecond (ordered by ID).
func TestLexicalPreviewsAreNeighbours(t *testing.T) {
	msgs := append(slices.Clone(corpus),
		m(11, games, bob, 10*time.Hour+time.Minute, "same instant as the sale, the boss fight again"),
		m(12, games, alice, 10*time.Hour+time.Minute, "boss music is the best part"))
	bothIndexes(t, setupWith(t, msgs), func(t *testing.T, s *Service) {
		ctx := context.Background()
		for _, q := range []string{"boiler", "pizza", "boss", "music", "game", "lease", "radiator", "보일러"} {
			resp := run(t, s, Request{Query: q, Mode: Lexical, Limit: 50})
			if len(resp.Results) == 0 {
				t.Fatalf("%q: no results", q)
			}
			for _, r := range resp.Results {
				hit, err := s.DB.Message(ctx, r.MessageID)
				if err != nil {
					t.Fatal(err)
				}
				prev, next, err := s.DB.Neighbours(ctx, hit, 1, 1)
				if err != nil {
					t.Fatal(err)
				}
				var want, got []int64
				for _, p := range append(append(prev, *hit), next...) {
					want = append(want, p.ID)
				}
				for _, p := range r.Previews {
					got = append(got, p.ID)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%q: message %d shown with %v, want its neighbours %v", q, r.MessageID, got, want)
				}
			}
		}
	})
}
