package answer

import (
	"strings"
	"testing"
	"time"
)

func TestParseBound(t *testing.T) {
	kst := time.FixedZone("KST", 9*3600)
	now := time.Date(2024, 6, 12, 15, 30, 0, 0, kst) // a Wednesday
	day := func(y int, m time.Month, d int) int64 { return time.Date(y, m, d, 0, 0, 0, 0, kst).UnixMicro() }
	for _, c := range []struct {
		in           string
		since, until int64
	}{
		{"2024-05-01", day(2024, 5, 1), day(2024, 5, 2) - 1},
		{"2024/05/01", day(2024, 5, 1), day(2024, 5, 2) - 1},
		{"May 1, 2024", day(2024, 5, 1), day(2024, 5, 2) - 1},
		{"2024년 5월 1일", day(2024, 5, 1), day(2024, 5, 2) - 1},
		{"May 2024", day(2024, 5, 1), day(2024, 6, 1) - 1},
		{"2024년 5월", day(2024, 5, 1), day(2024, 6, 1) - 1},
		{"2023", day(2023, 1, 1), day(2024, 1, 1) - 1},
		{"2023년", day(2023, 1, 1), day(2024, 1, 1) - 1},
		{"yesterday", day(2024, 6, 11), day(2024, 6, 12) - 1},
		{"어제", day(2024, 6, 11), day(2024, 6, 12) - 1},
		{"last week", day(2024, 6, 3), day(2024, 6, 10) - 1},
		{"지난주", day(2024, 6, 3), day(2024, 6, 10) - 1},
		{"3월", day(2024, 3, 1), day(2024, 4, 1) - 1},
		{"9월", day(2023, 9, 1), day(2023, 10, 1) - 1}, // the latest September
		{"5월 1일", day(2024, 5, 1), day(2024, 5, 2) - 1},
		// Whole days, so that a question's pages, asked moments apart, are
		// the same query.
		{"7d", day(2024, 6, 5), day(2024, 6, 13) - 1},
		{"2 weeks ago", day(2024, 5, 29), day(2024, 6, 13) - 1},
		{"7일", day(2024, 6, 5), day(2024, 6, 13) - 1},
		{"3개월 전", day(2024, 3, 12), day(2024, 6, 13) - 1},
		{"2024-05-01T09:00:00+09:00", day(2024, 5, 1) + 9*3600e6, day(2024, 5, 1) + 9*3600e6},
		{"1714521600000000", 1714521600000000, 1714521600000000},
	} {
		since, err := ParseBound(c.in, false, now)
		if err != nil || since != c.since {
			t.Errorf("since %q = %v, %v; want %v", c.in, time.UnixMicro(since).In(kst), err, time.UnixMicro(c.since).In(kst))
		}
		until, err := ParseBound(c.in, true, now)
		if err != nil || until != c.until {
			t.Errorf("until %q = %v, %v; want %v", c.in, time.UnixMicro(until).In(kst), err, time.UnixMicro(c.until).In(kst))
		}
	}
	if a, _ := ParseBound("7d", false, now); a != mustBound(t, "7d", now.Add(3*time.Hour)) {
		t.Error("7d moved within a day")
	}
	for _, bad := range []string{"banana", "since yesterday we", "13월", "2024-02-30", "7x"} {
		if _, err := ParseBound(bad, false, now); err == nil || !strings.Contains(err.Error(), "try 2024-05-01") {
			t.Errorf("%q: err = %v, want one with an example", bad, err)
		}
	}
}

func mustBound(t *testing.T, s string, now time.Time) int64 {
	t.Helper()
	b, err := ParseBound(s, false, now)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
