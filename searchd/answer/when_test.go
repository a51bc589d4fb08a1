package answer

import (
	"context"
	"dsearch/searchd"
	"dsearch/searchd/search"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
	"strings"
	"testing"
	"time"
)

func TestTimeIn(t *testing.T) {
	kst := time.FixedZone("KST", 9*3600)
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, kst) // a Tuesday
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, kst) }
	for _, c := range []struct {
		question string
		from, to time.Time // [from, to) before the margin; zero: no date
	}{
		{"What painting did Melanie show to Caroline on October 13, 2023?", day(2023, 10, 13), day(2023, 10, 14)},
		{"What did Gina find for her store on 1 February, 2023?", day(2023, 2, 1), day(2023, 2, 2)},
		{"what happened on Sept. 3rd 2024", day(2024, 9, 3), day(2024, 9, 4)},
		{"2024-03-05 회의 뭐였지", day(2024, 3, 5), day(2024, 3, 6)},
		{"2023년 10월 13일에 뭐 했어?", day(2023, 10, 13), day(2023, 10, 14)},
		{"2023년 10월 여행", day(2023, 10, 1), day(2023, 11, 1)},
		{"What setback did Melanie face in October 2023?", day(2023, 10, 1), day(2023, 11, 1)},
		{"who said they were moving last year?", day(2025, 1, 1), day(2026, 1, 1)},
		{"작년에 이사 간다고 한 사람", day(2025, 1, 1), day(2026, 1, 1)},
		{"지난 달 회식", day(2026, 11, 1), day(2026, 12, 1)},
		{"저번주에 뭐 먹었지", day(2026, 11, 23), day(2026, 11, 30)},
		{"what did we eat yesterday", day(2026, 11, 30), day(2026, 12, 1)},
		{"올해 본 영화", day(2026, 1, 1), day(2027, 1, 1)},
		{"How many times has Melanie gone to the beach in 2023?", day(2023, 1, 1), day(2024, 1, 1)},
		{"오늘날 코카콜라의 인기", time.Time{}, time.Time{}}, // nowadays
		{"the boiler story", time.Time{}, time.Time{}},
	} {
		got, ok := timeIn(c.question, now)
		if c.from.IsZero() {
			if ok {
				t.Errorf("%q: found %v, want no date", c.question, got)
			}
			continue
		}
		want := widen(c.from, c.to)
		if !ok || got != want {
			t.Errorf("%q: %v %v, want %v..%v", c.question, ok, got, c.from, c.to)
		}
	}
	// A day that does not exist is not read as one: the year stands.
	if got, ok := timeIn("on February 30, 2023", now); !ok || got != widen(day(2023, 1, 1), day(2024, 1, 1)) {
		t.Errorf("February 30, 2023: %v %v, want the year 2023", ok, got)
	}
	// The margin: a week either side, ends inclusive; after a month, as
	// long again as the month.
	s := widen(day(2023, 10, 13), day(2023, 10, 14))
	if s.Since != day(2023, 10, 6).UnixMicro() || s.Until != day(2023, 10, 21).UnixMicro()-1 {
		t.Errorf("margin: %v", s)
	}
	if m := widen(day(2023, 3, 1), day(2023, 4, 1)); m.Since != day(2023, 2, 22).UnixMicro() || m.Until != day(2023, 5, 2).UnixMicro()-1 {
		t.Errorf("a month's margin: %v", m)
	}
	if f, ok := s.narrow(sqlite.Filter{Channels: []int64{1}}); !ok || f.Since != s.Since || f.Until != s.Until || len(f.Channels) != 1 {
		t.Errorf("an unbounded filter takes the span: %+v", f)
	}
	if _, ok := s.narrow(sqlite.Filter{Since: day(2024, 1, 1).UnixMicro()}); ok {
		t.Error("a filter after the span overlaps it")
	}
}

// A date in the question searches that time, if anything was said then,
// and pages keep to it.
func TestQuestionDates(t *testing.T) {
	s, _ := setup(t, &fakeOllama{})
	s.LLM = nil
	ctx := context.Background()
	later := t0.AddDate(0, 2, 0) // 2025-05-03
	alex := searchd.Author{ID: 10, Username: "alex"}
	b := &searchd.Batch{Messages: []searchd.Message{
		{ID: 20, ChannelID: 1, CreatedAt: later.UnixMicro(), Content: "packing boxes for the new apartment", Type: "Default", Author: alex},
		{ID: 21, ChannelID: 1, CreatedAt: later.Add(3 * time.Hour).UnixMicro(), Content: "the new apartment has a balcony", Type: "Default", Author: alex},
	}}
	if _, err := s.DB.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return later.AddDate(0, 0, 1) }
	days := func(r *Response) map[string]bool { // the days of the talks found
		out := map[string]bool{}
		for _, res := range r.Results {
			out[time.UnixMicro(res.StartAt).UTC().Format("2006-01-02")] = true
		}
		return out
	}
	march, may := "2025-03-03", "2025-05-03"
	for _, c := range []struct {
		question string
		want     []string
		fallback bool
	}{
		{"the new apartment on March 3, 2025", []string{march}, false},
		{"the new apartment yesterday", []string{may}, false},
		{"2025년 5월 new apartment", []string{may}, false},
		{"the new apartment in 2019", []string{march, may}, true},
		{"the new apartment", []string{march, may}, false},
	} {
		r, err := s.Query(ctx, Request{Question: c.question, NoSummary: true})
		if err != nil {
			t.Fatal(err)
		}
		got := days(r)
		ok := len(got) == len(c.want) && r.TimeFallback == c.fallback && (r.Since != 0) == (!c.fallback && c.question != "the new apartment")
		for _, id := range c.want {
			ok = ok && got[id]
		}
		if !ok {
			t.Errorf("%q: messages %v, time %d..%d, fallback %v; want %v, fallback %v", c.question, got, r.Since, r.Until, r.TimeFallback, c.want, c.fallback)
		}
	}
	// The caller's own filter is kept: a date outside it is not searched.
	r, err := s.Query(ctx, Request{Question: "the new apartment on March 3, 2025", Filter: sqlite.Filter{Since: later.AddDate(0, 0, -1).UnixMicro()}})
	if err != nil || !r.TimeFallback || len(days(r)) != 1 || !days(r)[may] {
		t.Errorf("date outside the filter: %+v, %v", r, err)
	}
	// Later pages keep to the question's time.
	first, err := s.Query(ctx, Request{Question: "new apartment or boxes yesterday", Limit: 1, NoSummary: true})
	if err != nil || first.Since == 0 {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	if first.NextCursor == "" {
		t.Fatal("no second page: the fixture has two talks that day")
	}
	version, _ := s.DB.IndexVersion(ctx)
	half := search.EncodeCursor(queryCursor{Cursor: search.Cursor{Version: version, Fingerprint: fingerprint("x", sqlite.Filter{}, nil), Offset: 1},
		Plan: Plan{Subqueries: []string{"x"}}, Source: "rules", Since: 1})
	if _, err := s.Query(ctx, Request{Question: "x", Cursor: half}); err == nil || !strings.Contains(err.Error(), "invalid cursor") {
		t.Errorf("a cursor with half a time span: %v, want invalid", err)
	}
	next, err := s.Query(ctx, Request{Question: "new apartment or boxes yesterday", Limit: 1, Cursor: first.NextCursor})
	if err != nil || next.Since != first.Since || len(next.Results) != 1 || !days(next)[may] || next.NextCursor != "" {
		t.Errorf("next page: %+v, %v; want the day's other talk, and no more", next, err)
	}
}
