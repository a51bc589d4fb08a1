package answer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// BoundExample is what a time bound may look like, for errors and help.
const BoundExample = `2024-05-01, 2024/05/01, "May 2024", 2024, yesterday, "last week", 7d, 어제, 지난주, 3월, "2024년 5월", or 2024-05-01T09:00:00+09:00`

var (
	// ago is "7d", "2w", "3 days", "7일", "2주", optionally with "ago"/"전".
	agoRE = regexp.MustCompile(`(?i)^(\d{1,4})\s*(d|days?|w|weeks?|months?|y|years?|일|주|개월|달|년)\s*(?:ago|전)?$`)
	// koMonthRE is a month of the year without one: "3월", "5월 1일".
	koMonthRE = regexp.MustCompile(`^(\d{1,2})\s*월(?:\s*(\d{1,2})\s*일)?$`)
	koYearRE  = regexp.MustCompile(`^(\d{4})\s*년$`)
)

// ParseBound reads the since (until false) or until bound of a filter as
// people type it, in now's zone: Unix microseconds, RFC 3339, or any date
// the question pipeline reads in a question (dateIn: "2024-05-01",
// "2024/05/01", "May 1, 2024", "2024년 5월", "yesterday", "지난주", ...),
// plus "3월" (the latest March not ahead of now) and spans back from now
// in whole days ("7d", "2w", "3 months", "7일", "2주 전": from the start of
// the day that long ago to the end of today). A date names a stretch of time:
// since is its start, until its end (inclusive). Empty is 0: no bound.
func ParseBound(s string, until bool, now time.Time) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if us, err := strconv.ParseInt(s, 10, 64); err == nil && len(s) > 4 { // not a year
		return us, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UnixMicro(), nil
	}
	from, to, ok := dateSpan(s, now)
	if !ok {
		return 0, fmt.Errorf("%q is not a time I can read: try %s", s, BoundExample)
	}
	if until {
		return to.UnixMicro() - 1, nil
	}
	return from.UnixMicro(), nil
}

// dateSpan is the stretch of time s names as a whole, [from, to).
func dateSpan(s string, now time.Time) (from, to time.Time, ok bool) {
	loc := now.Location()
	if g := koYearRE.FindStringSubmatch(s); g != nil {
		s = g[1] // "2024년" is the year, read below
	}
	if g := agoRE.FindStringSubmatch(s); g != nil && len(g[1]) < 4 {
		n, _ := strconv.Atoi(g[1])
		var t time.Time
		switch u := strings.ToLower(g[2]); {
		case u == "d" || strings.HasPrefix(u, "day") || u == "일":
			t = now.AddDate(0, 0, -n)
		case u == "w" || strings.HasPrefix(u, "week") || u == "주":
			t = now.AddDate(0, 0, -7*n)
		case strings.HasPrefix(u, "month") || u == "개월" || u == "달":
			t = now.AddDate(0, -n, 0)
		default:
			t = now.AddDate(-n, 0, 0)
		}
		// Whole days: from the start of that day to the end of today. A
		// bound to the microsecond moved between a question's pages, and
		// their cursors no longer matched it.
		midnight := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc) }
		return midnight(t), midnight(now).AddDate(0, 0, 1), true
	}
	if g := koMonthRE.FindStringSubmatch(s); g != nil {
		m, _ := strconv.Atoi(g[1])
		y := now.Year()
		if time.Month(m) > now.Month() {
			y-- // "3월" in January is last March
		}
		if g[2] == "" {
			t := time.Date(y, time.Month(m), 1, 0, 0, 0, 0, loc)
			return t, t.AddDate(0, 1, 0), m >= 1 && m <= 12
		}
		d, _ := strconv.Atoi(g[2])
		t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc)
		return t, t.AddDate(0, 0, 1), int(t.Month()) == m && t.Day() == d
	}
	from, to, words, ok := dateIn(s, now)
	if !ok || strings.TrimSpace(words) != s {
		return time.Time{}, time.Time{}, false // a date inside other words is not a bound
	}
	return from, to, true
}
