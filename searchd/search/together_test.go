package search

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/index"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite/sqlitetest"
)

// A question whose answer is told over several conversations finds a
// few of its words in each and all of them in none: no result holds
// enough of them, but the first results together hold them all, far
// beyond chance, and the response is confident, each result holding one
// of them marked so. A question whose words they do not hold stays
// unconfident, and so does the first one with Together off.
func TestFirstResultsTogether(t *testing.T) {
	ctx := context.Background()
	var msgs []searchd.Message
	for i, text := range []string{
		"the boiler broke and the plumber comes tomorrow to fix the heating",
		"moving to a new apartment next month, the landlord wants a longer lease",
		"finished the game last night, the ending was great",
		"pizza and beer for dinner at the italian restaurant",
		"the dog needs a walk before the rain starts",
		"my sister got a new job at the hospital",
		"the car needs new tyres before winter",
		"we watched a movie about space and astronauts",
		"the garden tomatoes are finally red",
		"started learning the guitar, chords hurt my fingers",
		"signed up for a pottery class on saturdays",
		"bought ten kilos of clay for the studio",
		"the kiln at the community centre is fixed",
		"tried a blue glaze, it cracked",
	} {
		at := time.Duration(i) * 5 * time.Hour
		msgs = append(msgs, m(int64(2*i+1), general, alice, at, text), m(int64(2*i+2), general, bob, at+time.Minute, "oh really, tell me more about it"))
	}
	db := sqlitetest.Open(t)
	if _, err := db.Apply(ctx, &searchd.Batch{Messages: msgs}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if err := (&index.Job{DB: db, Embedder: wordsEmbedder{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	matrix, err := index.LoadMatrix(ctx, db, wordsDim)
	if err != nil {
		t.Fatal(err)
	}
	s := inMemory(t, &Service{DB: db, Matrix: matrix, Embedder: wordsEmbedder{}, Config: DefaultConfig()})
	for _, c := range []struct {
		query     string
		together  float64
		confident bool
	}{
		{"pottery clay kiln glaze", DefaultConfig().Together, true},
		{"pottery clay kiln glaze", 0, false},
		{"pottery violin submarine", DefaultConfig().Together, false},
	} {
		s.Config.Together = c.together
		resp, err := s.Search(ctx, Request{Query: c.query, Mode: Lexical})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) == 0 {
			t.Fatalf("%q: no results", c.query)
		}
		if resp.NoConfidentResults == c.confident {
			t.Errorf("%q, together %.2f: no_confident_results %v, want confident %v", c.query, c.together, resp.NoConfidentResults, c.confident)
		}
		for _, r := range resp.Results {
			cf := r.Confidence
			if cf.Support >= s.Config.Support {
				t.Errorf("%q: a result holds %d of %d words (support %.2f): the test wants none to hold enough", c.query, cf.Evidence.Found, cf.Evidence.Words, cf.Support)
			}
			if c.together > 0 && (cf.Together == 0 || cf.High != (c.confident && cf.Evidence.Found > 0)) {
				t.Errorf("%q: result %+v: together %.2f, high %v; want the first results' support, high where it holds a word of a confident response", c.query, r.Previews, cf.Together, cf.High)
			}
		}
	}
}
