package search

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/embed"
	"dsearch/searchd/index"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// The end of a conversation longer than the model's input (the fixture's
// 64 tokens) is found: the segment scores as its best window, and its
// last messages rank by the window that holds them.
func TestLongConversationsTail(t *testing.T) {
	s := setup(t)
	ctx := context.Background()
	var long []searchd.Message
	at := 60 * time.Hour
	for i := range 12 {
		long = append(long, m(int64(1000+i), games, alice, at+time.Duration(i)*time.Minute,
			"the boiler broke, the plumber will repair the radiator valve and the pressure"))
	}
	long = append(long,
		m(1012, games, bob, at+12*time.Minute, "we are moving, the landlord wants a longer lease"),
		m(1013, games, alice, at+13*time.Minute, "new apartment, boxes and movers next month"))
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: long}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	job := &index.Job{DB: s.DB, Embedder: s.Embedder.(*embed.Model), Matrix: s.Matrix, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := job.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}

	resp := run(t, s, Request{Query: "apartment lease landlord movers", Mode: Semantic, RankedMessages: true,
		Filter: sqlite.Filter{Channels: []int64{games}}})
	if len(resp.Results) == 0 {
		t.Fatal("no results")
	}
	r := resp.Results[0]
	if r.MessageID < 1000 {
		t.Fatalf("top result is another conversation: %+v", r)
	}
	vec, _ := s.Embedder.EmbedQuery(ctx, "apartment lease landlord movers")
	wins := s.Matrix.WindowScores(vec, r.SegmentID)
	if len(wins) < 2 || float64(wins[0].Score) > 0.5 || r.Score < 0.8 {
		t.Errorf("score %.2f over windows %v: want the last window's, not the first's", r.Score, wins)
	}
	if got := resp.RankedMessages[:2]; !(got[0] >= 1012 && got[1] >= 1012) {
		t.Errorf("ranked messages begin %v, want the moving talk (1012, 1013)", got)
	}
}
