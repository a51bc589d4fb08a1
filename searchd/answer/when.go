package answer

// Dates in questions: "what did Melanie show Caroline on October 13,
// 2023?", "작년에 이사 간다고 한 사람?". In a chat, a date in a question is
// when something was said, so the question searches that time first.

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"dsearch/searchd/sqlite"
)

// spanMargin widens a span on either side: people date what they said
// loosely ("on May 23" of news told on the 27th, "last weekend before
// April 10"). After a span of more than a week, the margin is as long as
// the span: what happened in March is told "last month" in April.
const spanMargin = 7 * 24 * time.Hour

// span is a stretch of time a question names, as a filter: µs, both ends
// inclusive.
type span struct{ Since, Until int64 }

var months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
	"june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
	"october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

const monthRE = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?`

var (
	mdyRE   = regexp.MustCompile(`(?i)\b` + monthRE + `\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b`)
	dmyRE   = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthRE + `,?\s+(\d{4})\b`)
	myRE    = regexp.MustCompile(`(?i)\b` + monthRE + `,?\s+(?:of\s+)?(\d{4})\b`)
	isoRE   = regexp.MustCompile(`\b(\d{4})[-./](\d{1,2})[-./](\d{1,2})\b`)
	koYMDRE = regexp.MustCompile(`(\d{4})\s*년\s*(\d{1,2})\s*월\s*(\d{1,2})\s*일`)
	koYMRE  = regexp.MustCompile(`(\d{4})\s*년\s*(\d{1,2})\s*월`)
	yearRE  = regexp.MustCompile(`\b((?:19|20)\d{2})\b`)
	relEnRE = regexp.MustCompile(`(?i)\b(?:today|yesterday|(?:this|last) (?:week|month|year))\b`)
	relKoRE = regexp.MustCompile(`오늘|어제|그저께|(?:이번|지난|저번) ?(?:주|달|해)|올해|금년|작년`)
)

// dateForm is a way of writing a date: its pattern and which groups hold
// the year, month (a number, or a name) and day.
type dateForm struct {
	re      *regexp.Regexp
	y, m, d int
	named   bool
}

func (f dateForm) month(g string) int {
	if f.named {
		return int(months[strings.ToLower(g)])
	}
	n, _ := strconv.Atoi(g)
	return n
}

// The most precise first: a day, then a month.
var (
	dayForms   = []dateForm{{mdyRE, 3, 1, 2, true}, {dmyRE, 3, 2, 1, true}, {koYMDRE, 1, 2, 3, false}, {isoRE, 1, 2, 3, false}}
	monthForms = []dateForm{{re: myRE, y: 2, m: 1, named: true}, {re: koYMRE, y: 1, m: 2}}
)

// relUnit is a relative date: a calendar unit, so many back from now's.
type relUnit struct {
	unit string // day, week, month or year
	back int
}

var relUnits = map[string]relUnit{
	"today": {"day", 0}, "yesterday": {"day", 1}, "thisweek": {"week", 0}, "lastweek": {"week", 1},
	"thismonth": {"month", 0}, "lastmonth": {"month", 1}, "thisyear": {"year", 0}, "lastyear": {"year", 1},
	"오늘": {"day", 0}, "어제": {"day", 1}, "그저께": {"day", 2},
	"이번주": {"week", 0}, "지난주": {"week", 1}, "저번주": {"week", 1},
	"이번달": {"month", 0}, "지난달": {"month", 1}, "저번달": {"month", 1},
	"이번해": {"year", 0}, "올해": {"year", 0}, "금년": {"year", 0}, "작년": {"year", 1}, "지난해": {"year", 1}, "저번해": {"year", 1},
}

// relative is the first relative date in a question and the words that
// name it. 오늘날 ("nowadays") is not today.
func relative(question string) (relUnit, string, bool) {
	for _, re := range []*regexp.Regexp{relEnRE, relKoRE} {
		for _, at := range re.FindAllStringIndex(question, -1) {
			if strings.HasPrefix(question[at[1]:], "날") {
				continue
			}
			if u, ok := relUnits[strings.ReplaceAll(strings.ToLower(question[at[0]:at[1]]), " ", "")]; ok {
				return u, question[at[0]:at[1]], true
			}
		}
	}
	return relUnit{}, "", false
}

// timeIn finds the first date a question names, the most precise kind
// first, and returns the time it covers in now's zone, widened by
// spanMargin. Relative ones ("last month", "지난달") count back from now.
func timeIn(question string, now time.Time) (span, bool) {
	from, to, _, ok := dateIn(question, now)
	if !ok {
		return span{}, false
	}
	return widen(from, to), true
}

// dateIn finds the first date a text names, the most precise kind first:
// the time it covers, [from, to) in now's zone, and the words that name it.
func dateIn(text string, now time.Time) (from, to time.Time, words string, ok bool) {
	loc := now.Location()
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	date := func(y, m, d int) (time.Time, bool) {
		t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc)
		return t, y >= 1970 && y <= 2100 && t.Year() == y && int(t.Month()) == m && t.Day() == d
	}
	for _, f := range dayForms {
		if g := f.re.FindStringSubmatch(text); g != nil {
			if t, ok := date(num(g[f.y]), f.month(g[f.m]), num(g[f.d])); ok {
				return t, t.AddDate(0, 0, 1), g[0], true
			}
		}
	}
	for _, f := range monthForms {
		if g := f.re.FindStringSubmatch(text); g != nil {
			if t, ok := date(num(g[f.y]), f.month(g[f.m]), 1); ok {
				return t, t.AddDate(0, 1, 0), g[0], true
			}
		}
	}
	if u, w, ok := relative(text); ok {
		y, m, d := now.Date()
		today := time.Date(y, m, d, 0, 0, 0, 0, loc)
		switch u.unit {
		case "day":
			t := today.AddDate(0, 0, -u.back)
			return t, t.AddDate(0, 0, 1), w, true
		case "week": // from Monday
			monday := today.AddDate(0, 0, -(int(today.Weekday())+6)%7-7*u.back)
			return monday, monday.AddDate(0, 0, 7), w, true
		case "month":
			t := time.Date(y, m-time.Month(u.back), 1, 0, 0, 0, 0, loc)
			return t, t.AddDate(0, 1, 0), w, true
		default:
			t := time.Date(y-u.back, 1, 1, 0, 0, 0, 0, loc)
			return t, t.AddDate(1, 0, 0), w, true
		}
	}
	if g := yearRE.FindStringSubmatch(text); g != nil {
		if t, ok := date(num(g[1]), 1, 1); ok {
			return t, t.AddDate(1, 0, 0), g[0], true
		}
	}
	return time.Time{}, time.Time{}, "", false
}

// widen is [from, to) as an inclusive span in µs, spanMargin wider
// before and after, or after by as long as the span when that is longer:
// an event is told after it happened.
func widen(from, to time.Time) span {
	after := max(spanMargin, to.Sub(from))
	return span{Since: from.Add(-spanMargin).UnixMicro(), Until: to.Add(after).UnixMicro() - 1}
}

// narrow is f within s; ok is false when they do not overlap.
func (s span) narrow(f sqlite.Filter) (sqlite.Filter, bool) {
	if f.Since == 0 || s.Since > f.Since {
		f.Since = s.Since
	}
	if f.Until == 0 || s.Until < f.Until {
		f.Until = s.Until
	}
	return f, f.Since <= f.Until
}
