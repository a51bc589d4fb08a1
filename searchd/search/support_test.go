package search

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/index"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// Support reads every word of a message, however long: a KorQuAD
// paragraph holds its question's words past the first 64 words or 1,024
// bytes, where a query's terms stop (ko-qa-dev's answer to "전기기타에서
// 강철, 니켈, 구리 … 부분은 무엇인가?" counted 1 of its 9 words, not 6).
func TestSupportReadsWholeMessages(t *testing.T) {
	long := strings.Repeat("기타의 소리는 픽업에서 나온다. ", 60) + "강철 니켈 구리 도체"
	if got := support(topicTerms("강철, 니켈, 구리 등의 도체"), nil, []string{long}); got != 0.8 {
		t.Errorf("support %.2f over a %d-byte message holding 4 of the 5 words at its end, want 0.80", got, len(long))
	}
}

// Support counts a word beyond what as much text holds by chance: every
// one of the twelve conversations holds "really" (half of all messages),
// so a question of it finds it and is hardly supported by it; a
// question of words one conversation holds is. Without a keyword index
// there is nothing to expect, and support is the share found.
func TestSupportBeyondChance(t *testing.T) {
	ctx := context.Background()
	plain := nothingMatchesService(t)
	s := inMemory(t, plain)
	for _, c := range []struct {
		query     string
		confident bool
	}{
		{"really? tell me", false},
		{"booked flights to japan", true},
	} {
		resp, err := s.Search(ctx, Request{Query: c.query, Mode: Semantic})
		if err != nil {
			t.Fatal(err)
		}
		top := resp.Results[0].Confidence
		if resp.NoConfidentResults == c.confident {
			t.Errorf("%q: no_confident_results %v, first result %+v; want confident %v", c.query, resp.NoConfidentResults, top, c.confident)
		}
		if !c.confident {
			ev := top.Evidence
			if ev.Found != ev.Words || ev.Words == 0 || ev.Chance < 0.5*float64(ev.Words) || top.Support >= s.Config.Support {
				t.Errorf("%q: %d of %d words found, %.2f expected by chance, support %.2f: want all found, most expected, too little supported", c.query, ev.Found, ev.Words, ev.Chance, top.Support)
			}
			resp, err := plain.Search(ctx, Request{Query: c.query, Mode: Semantic})
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Results[0].Confidence.Support; got != 1 {
				t.Errorf("%q without a keyword index: support %.2f, want the share found, 1", c.query, got)
			}
		}
	}
}

func TestChance(t *testing.T) {
	// A word in half of the other messages is in a text as long as two
	// 3 times in 4: 6 of 12 messages hold it, 1 of them the text's own
	// 2 (5 of the other 10); a word only the text holds, never.
	r := rarity{df: []float64{6, 2}, n: 12}
	if got := r.chance([]int{1, 2}, 2, 2); math.Abs(got-0.75) > 1e-9 {
		t.Errorf("chance = %.3f, want 0.75", got)
	}
	if got := beyondChance(1, 2, 0.75); math.Abs(got-0.125) > 1e-9 {
		t.Errorf("beyondChance = %.3f, want (1 − 0.75) / 2", got)
	}
	if got := beyondChance(0, 0, 0); got != 1 {
		t.Errorf("beyondChance without words = %.3f, want 1", got)
	}
	// A paragraph is as many messages as its length in average messages.
	q := &query{rarity: rarity{avgLen: 2}}
	_, n := holding(nil, []string{"one two three four", "five six"})
	if got := q.messagesLike(n, 2); got != 3 {
		t.Errorf("messagesLike = %.2f, want 6 words / 2", got)
	}
}

// A result's support is told from the channels searched only: a channel
// the asker cannot read, full of the question's words, changes nothing
// of it (or a question could tell how often a word is said there).
func TestSupportIsTheChannelsSearched(t *testing.T) {
	ctx := context.Background()
	s := inMemory(t, nothingMatchesService(t))
	req := Request{Query: "booked flights to japan", Mode: Semantic, Filter: sqlite.Filter{Channels: []int64{general}}}
	before := run(t, s, req).Results[0].Confidence
	var private []searchd.Message
	for i := range 200 {
		private = append(private, m(int64(1000+i), games, bob, time.Duration(i)*time.Minute, "booked flights to japan again, japan flights"))
	}
	if _, err := s.DB.Apply(ctx, &searchd.Batch{Messages: private}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	after := run(t, s, req).Results[0].Confidence
	if after.Support != before.Support || after.Evidence.Chance != before.Evidence.Chance {
		t.Errorf("support %.3f (%.3f words expected) before another channel's messages, %.3f (%.3f) after: want the same",
			before.Support, before.Evidence.Chance, after.Support, after.Evidence.Chance)
	}
	// Told from the channels the audience may read, when the search is
	// narrowed to fewer: the same when those are the channel searched,
	// more expected when they hold the other channel.
	req.Readable = []int64{general}
	if got := run(t, s, req).Results[0].Confidence; got.Evidence.Chance != before.Evidence.Chance {
		t.Errorf("readable = the channel searched: %.3f words expected, want %.3f", got.Evidence.Chance, before.Evidence.Chance)
	}
	req.Readable = []int64{general, games}
	if got := run(t, s, req).Results[0].Confidence; got.Evidence.Chance <= before.Evidence.Chance {
		t.Errorf("readable holding the other channel: %.3f words expected, want more than %.3f", got.Evidence.Chance, before.Evidence.Chance)
	}
	// Over every channel (a search without a filter) they count.
	req.Filter, req.Readable = sqlite.Filter{}, nil
	if all := run(t, s, req).Results[0].Confidence; all.Evidence.Chance <= before.Evidence.Chance {
		t.Errorf("over every channel %.3f words expected, over the one %.3f: want more", all.Evidence.Chance, before.Evidence.Chance)
	}
}

// A result's words count where its meaning is: a conversation that
// holds every word of the question, but only in a message further from
// the question than the average message rescored (a word said in
// passing, in a message about something else), is not confident by its
// support; the same conversation with the words in a message nearer
// the question than average is. With SupportNear off, both are.
func TestSupportWhereTheMeaningIs(t *testing.T) {
	texts := []string{"the printer jams again, btw the pottery kiln glaze came", "ok", "see you monday"}
	judge := func(nearWords, supportNear bool) Confidence {
		cfg := DefaultConfig()
		cfg.SupportNear = supportNear
		q := &query{svc: &Service{Config: cfg}, Request: Request{Query: "pottery kiln glaze", Mode: Semantic}}
		q.text, q.vec = q.Query, []float32{1}
		q.spread = index.Spread{N: 12, Mean: 0.8, Std: 0.02} // the result no closer than the rest: no standout
		ws := &withinSegment{judged: map[int64]float64{}}
		for i, text := range texts {
			ws.messages = append(ws.messages, sqlite.StoredMessage{ID: int64(i + 1), Content: text})
		}
		// The messages rescored: their mean is 0.8.
		for _, sim := range []float64{0.75, 0.8, 0.85, 0.8, 0.8} {
			q.msgSpread.Add(sim)
		}
		ws.judged[1], ws.judged[2], ws.judged[3] = 0.7, 0.82, 0.84 // the words in passing
		if nearWords {
			ws.judged[1], ws.judged[2], ws.judged[3] = 0.9, 0.75, 0.74
		}
		q.within = map[int64]*withinSegment{7: ws}
		r := Result{SegmentID: 7, Components: map[string]Component{"semantic": {Rank: 1, Score: 0.8}}}
		return q.confidence(r, texts)
	}
	for _, c := range []struct {
		nearWords, supportNear, want bool
	}{
		{false, true, false},
		{true, true, true},
		{false, false, true},
	} {
		got := judge(c.nearWords, c.supportNear)
		if got.Support < DefaultConfig().Support || got.Standout >= DefaultConfig().Standout {
			t.Fatalf("support %.2f, standout %.2f: the test wants every word found and no standout", got.Support, got.Standout)
		}
		if got.High != c.want || !got.Evidence.NearJudged || (got.Evidence.NearSupport > 0) != c.nearWords {
			t.Errorf("words in a message near the question %v, SupportNear %v: high %v (near support %.2f, judged %v); want high %v",
				c.nearWords, c.supportNear, got.High, got.Evidence.NearSupport, got.Evidence.NearJudged, c.want)
		}
	}
}
