package search

import (
	"context"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/sqlite"
)

// countingEmbedder embeds every passage as the same unit vector, counting.
type countingEmbedder struct{ passages int }

func (e *countingEmbedder) Dim() int { return 2 }
func (e *countingEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return []float32{1, 0}, nil
}
func (e *countingEmbedder) EmbedPassages(_ context.Context, texts []string) ([][]float32, error) {
	e.passages += len(texts)
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

// A message without a stored vector is embedded on the fly, unless
// searches are queueing: then it waits for the job.
func TestEmbedMissingYieldsWhenBusy(t *testing.T) {
	for _, busy := range []bool{false, true} {
		e := &countingEmbedder{}
		q := &query{svc: &Service{Embedder: e, Config: DefaultConfig(), Busy: func() bool { return busy }}}
		msgs := map[int64][]sqlite.StoredMessage{1: {{ID: 7, Content: "the boiler broke again this morning"}}}
		vecs := map[int64][]float32{}
		q.embedMissing(context.Background(), msgs, vecs)
		want := 1
		if busy {
			want = 0
		}
		if e.passages != want || q.embedded != want || len(vecs) != want {
			t.Errorf("busy %v: embedded %d (counted %d, vectors %d), want %d", busy, e.passages, q.embedded, len(vecs), want)
		}
	}
}

// The answer to a question is found by the question's words, which it
// seldom repeats; only a reply by someone else is an answer.
func TestAnswerFoundByItsQuestion(t *testing.T) {
	const carol = 3
	talk := func(answerer int64, question string) []searchd.Message {
		return []searchd.Message{
			m(1, general, alice, 0, question),
			m(2, general, answerer, time.Minute, "yes, in april, with the kids"),
			m(3, general, carol, 2*time.Minute, "my sister lives near an apartment block with a pizza restaurant and a steam shop"),
			m(4, general, carol, 3*time.Minute, "pizza and beer for dinner later"),
		}
	}
	const asked, linked = "are you moving house?", "moving house https://example.com/listing?id=7"
	for _, c := range []struct {
		name, question string
		answerer       int64
		credit         float64
		second         int64
	}{
		{"a reply by someone else", asked, bob, DefaultConfig().AnswerCredit, 2},
		{"the asker going on", asked, alice, DefaultConfig().AnswerCredit, 3},
		{"credit off", asked, bob, 0, 3},
		{"a question mark in a link asks nothing", linked, bob, DefaultConfig().AnswerCredit, 3},
	} {
		t.Run(c.name, func(t *testing.T) { wantSecond(t, talk(c.answerer, c.question), c.credit, c.second) })
	}
}

// An answer to a question about what its author said is found by what
// the author said first: the question ("where to?") holds no words the
// search matches.
func TestAnswerFoundByWhatWasAsked(t *testing.T) {
	const carol = 3
	talk := func(first int64) []searchd.Message {
		return []searchd.Message{
			m(1, general, first, 0, "we are moving house next month"),
			m(2, general, bob, time.Minute, "oh nice, where to?"),
			m(3, general, alice, 2*time.Minute, "near the river, by the bakery"),
			m(4, general, carol, 3*time.Minute, "my sister lives near an apartment block with a pizza restaurant and a steam shop"),
		}
	}
	for _, c := range []struct {
		name   string
		first  int64
		credit float64
		second int64
	}{
		{"the answerer said it first", alice, DefaultConfig().AnswerCredit, 3},
		{"someone else said it", carol, DefaultConfig().AnswerCredit, 4},
		{"credit off", alice, 0, 4},
	} {
		t.Run(c.name, func(t *testing.T) { wantSecond(t, talk(c.first), c.credit, c.second) })
	}
}

// wantSecond searches the talk for moving house with the answer credit
// given and wants message 1 ranked first, then second.
func wantSecond(t *testing.T, talk []searchd.Message, credit float64, second int64) {
	t.Helper()
	s := setupWith(t, talk)
	s.Config.AnswerCredit = credit
	got := run(t, s, Request{Query: "moving to a new apartment", RankedMessages: true}).RankedMessages
	if len(got) < 2 || got[0] != 1 || got[1] != second {
		t.Errorf("ranked messages %v, want 1 then %d", got, second)
	}
}

// askedAbout: the message the question replied to, else the one before,
// when the answerer wrote it.
func TestAskedAbout(t *testing.T) {
	const carol = 3
	ms := []sqlite.StoredMessage{
		{ID: 10, AuthorID: alice, Content: "moving next month"},
		{ID: 11, AuthorID: bob, Content: "pizza later?"},
		{ID: 12, AuthorID: bob, Content: "where to?", ReplyToID: 10},
		{ID: 13, AuthorID: alice, Content: "the river"},
		{ID: 14, AuthorID: bob, Content: "which one?", ReplyToID: 99}, // not in the segment: the one before
	}
	at := map[int64]int{}
	for i, m := range ms {
		at[m.ID] = i
	}
	for _, c := range []struct {
		question int
		answerer int64
		want     int
	}{
		{2, alice, 0},  // the reply reference, past bob's own message
		{1, alice, 0},  // the one before
		{4, alice, 3},  // a reference outside the segment: the one before
		{1, carol, -1}, // the answerer did not say it
		{0, bob, -1},   // nothing before
	} {
		if got := askedAbout(ms, at, c.question, c.answerer); got != c.want {
			t.Errorf("question %d answered by %d follows up %d, want %d", ms[c.question].ID, c.answerer, got, c.want)
		}
	}
}

// answerTo: the message replied to, else the one before, when someone
// else asked something there.
func TestAnswerTo(t *testing.T) {
	ms := []sqlite.StoredMessage{
		{ID: 10, AuthorID: alice, Content: "이사 언제 가？"},
		{ID: 11, AuthorID: bob, Content: "pizza later?"},
		{ID: 12, AuthorID: bob, Content: "다음 달에", ReplyToID: 10},
		{ID: 13, AuthorID: alice, Content: "nice"},
		{ID: 14, AuthorID: bob, Content: "and you?"},
		{ID: 15, AuthorID: alice, Content: "me too", ReplyToID: 99}, // not in the segment: the one before
	}
	at := map[int64]int{}
	asks := make([]bool, len(ms))
	for i, m := range ms {
		at[m.ID] = i
		asks[i] = strings.ContainsAny(m.Content, "?？")
	}
	for i, want := range []int{-1, 0, 0, -1, -1, 4} {
		if got := answerTo(ms, asks, at, i); got != want {
			t.Errorf("message %d answers %d, want %d", ms[i].ID, got, want)
		}
	}
}
