package search

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"dsearch/searchd/lexical"
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

// holdsAny answers as lexical.Contains asked term by term: inflections,
// case, accents, Hangul and Han runs, a term only past the first words of
// a long message (where a query's terms stop), and no term at all.
func TestHoldsAnyIsContains(t *testing.T) {
	long := strings.Repeat("filler words here ", 100) + "the boilers broke"
	texts := []string{"", "Games tonight?", "the GAME is on", "café au lait", "Cafe", "보일러 수리 기사님", "보일러가 고장",
		"東京タワー", "naïve résumé", "gaming", long, "Bob's boiler", "전세 이사 집", "ranked-game tonight"}
	queries := []string{"", "game", "games tonight", "cafe", "café", "보일러", "수리 보일러", "東京", "resume naive", "boiler",
		"boilers broke", "bob", "이사 집 전세", "ranked game", "nothing matches"}
	for _, q := range queries {
		terms := lexical.Terms(q)
		holds := holdsAny(terms)
		for _, text := range texts {
			want := false
			for _, term := range terms {
				want = want || lexical.Contains(text, term)
			}
			if got := holds(text); got != want {
				t.Errorf("%q in %.40q: %v, lexical.Contains says %v", q, text, got, want)
			}
		}
	}
}

// A result names its authors, and gives their IDs in the same order: a
// public answer naming one is withdrawn when that member opts out.
func TestResultsNameTheirAuthorsByID(t *testing.T) {
	s := setup(t)
	ids := map[string]int64{"alice": alice, "bob": bob}
	for _, mode := range []Mode{Lexical, Semantic, Hybrid, Pipeline} {
		resp := run(t, s, Request{Query: "the boiler broke and the landlord", Mode: mode, Limit: 5})
		named := 0
		for _, r := range resp.Results {
			if len(r.AuthorIDs) != len(r.Authors) {
				t.Fatalf("%s: authors %v, IDs %v", mode, r.Authors, r.AuthorIDs)
			}
			for i, name := range r.Authors {
				if ids[name] != r.AuthorIDs[i] {
					t.Errorf("%s: author %q given ID %d", mode, name, r.AuthorIDs[i])
				}
				named++
			}
		}
		if named == 0 && mode != Lexical {
			t.Errorf("%s: no result names an author", mode)
		}
	}
}
