package answer

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A summary's dates and figures must come from what its model was shown:
// a date near one the question or a result holds, a number one of them
// holds (SmolLM2 wrote days and sums no message holds). Dates as people
// write them, and what a message's figures may be written as in a summary
// (7.45 as 7:45, 3만 5천 as 35,000), are read here.

// Dates as a summary writes them, the year left out or not: 2023-05-28
// (isoRE), 28 May 2023, May 28th, 2023년 5월 28일 (monthRE and months:
// when.go's, which reads a question's dates).
var (
	dayMonthRE = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + monthRE + `(?:,?\s+(\d{4}))?`)
	monthDayRE = regexp.MustCompile(`(?i)\b` + monthRE + `\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?`)
	koDayRE    = regexp.MustCompile(`(?:(\d{4})\s*년\s*)?(\d{1,2})\s*월\s*(\d{1,2})\s*일`)
)

// day is a date as written: year 0 when none is.
type day struct{ year, month, day int }

// datesIn finds the dates text writes, and where.
func datesIn(text string) (days []day, at [][]int) {
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	month := func(s string) int { return int(months[strings.ToLower(strings.TrimSuffix(s, "."))]) }
	add := func(d day, loc []int) {
		if d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= 31 {
			days = append(days, d)
			at = append(at, loc[:2])
		}
	}
	for _, m := range isoRE.FindAllStringSubmatchIndex(text, -1) {
		add(day{atoi(text[m[2]:m[3]]), atoi(text[m[4]:m[5]]), atoi(text[m[6]:m[7]])}, m)
	}
	for _, m := range dayMonthRE.FindAllStringSubmatchIndex(text, -1) {
		d := day{0, month(text[m[4]:m[5]]), atoi(text[m[2]:m[3]])}
		if m[6] >= 0 {
			d.year = atoi(text[m[6]:m[7]])
		}
		add(d, m)
	}
	for _, m := range monthDayRE.FindAllStringSubmatchIndex(text, -1) {
		d := day{0, month(text[m[2]:m[3]]), atoi(text[m[4]:m[5]])}
		if m[6] >= 0 {
			d.year = atoi(text[m[6]:m[7]])
		}
		add(d, m)
	}
	for _, m := range koDayRE.FindAllStringSubmatchIndex(text, -1) {
		d := day{0, atoi(text[m[4]:m[5]]), atoi(text[m[6]:m[7]])}
		if m[2] >= 0 {
			d.year = atoi(text[m[2]:m[3]])
		}
		add(d, m)
	}
	return days, at
}

// dateSlack is how far a date a summary names may be from every date it
// was shown: what "yesterday", "last week" or "in two weeks" in a message
// of that day mean.
const dateSlack = 14 * 24 * time.Hour

// near says whether a and b can be the same day give or take dateSlack.
// A date without its year is taken in the other's year or either next to
// it; two without are taken in one year.
func near(a, b day) bool {
	if a.year != 0 && b.year == 0 {
		a, b = b, a
	}
	by := b.year
	if by == 0 {
		by = 2001
	}
	years := []int{a.year}
	if a.year == 0 {
		years = []int{by - 1, by, by + 1}
	}
	bt := time.Date(by, time.Month(b.month), b.day, 0, 0, 0, 0, time.UTC)
	for _, y := range years {
		if time.Date(y, time.Month(a.month), a.day, 0, 0, 0, 0, time.UTC).Sub(bt).Abs() <= dateSlack {
			return true
		}
	}
	return false
}

// smallNumber is the largest number a summary may write that its material
// need not: a count it made of what it read ("2 people", "3 times", "the
// 7th" from "a week ago").
const smallNumber = 10

var (
	numberRE = regexp.MustCompile(`\d+(?:[.,]\d+)*`)
	// scaledRE is a number with a word that multiplies it: 5만, 3천,
	// 1.5 million, 20k.
	scaledRE = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(만|천|백|억|k\b|thousand|million)`)
)

var numberWords = map[string]float64{"eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
	"sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
	"fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
	"스물": 20, "서른": 30, "마흔": 40, "쉰": 50}

var scales = map[string]float64{"만": 1e4, "천": 1e3, "백": 1e2, "억": 1e8, "k": 1e3, "thousand": 1e3, "million": 1e6}

// number reads a number as written (1,200 and 1.5 alike).
func number(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	return f, err == nil
}

// numbersIn are the numbers material names: in digits, in words, and
// scaled by a word (5만 is 50000).
func numbersIn(material string) map[float64]bool {
	out := map[float64]bool{}
	for _, s := range numberRE.FindAllString(material, -1) {
		if f, ok := number(s); ok {
			out[f] = true
		}
	}
	for _, m := range scaledRE.FindAllStringSubmatch(material, -1) {
		if f, ok := number(m[1]); ok {
			out[math.Round(f*scales[strings.ToLower(m[2])])] = true
		}
	}
	for _, w := range words(material) {
		if f, ok := numberWords[w]; ok {
			out[f] = true
		}
	}
	// A Korean sum of scaled parts is one number: 3만 5천 is 35000, 1억
	// 2000만 120000000, 2만 500 20500.
	for _, run := range koCompoundRE.FindAllString(material, -1) {
		sum, rest := 0.0, run
		for _, m := range koPartRE.FindAllStringSubmatch(run, -1) {
			f, _ := number(m[1])
			sum += f * scales[m[2]]
			rest = strings.Replace(rest, m[0], "", 1)
		}
		if f, ok := number(strings.TrimSpace(rest)); ok {
			sum += f
		}
		out[math.Round(sum)] = true
	}
	return out
}

// koCompoundRE is a Korean number of scaled parts, and koPartRE one part.
var (
	koCompoundRE = regexp.MustCompile(`(?:\d+(?:\.\d+)?\s*(?:억|만|천|백)\s*){2,}\d*|(?:\d+(?:\.\d+)?\s*(?:억|만|천|백)\s*)+\d+`)
	koPartRE     = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*(억|만|천|백)`)
)

// inventsFigure returns why text names a date or a number nothing in
// material (the question, the results and their dates) leads to, or "":
// a date more than dateSlack from every date material holds, or a number
// above smallNumber material does not hold (years are inventsYear's).
func inventsFigure(text, material string) string {
	text = citeRE.ReplaceAllString(text, " ")
	shownDays, shownAt := datesIn(material)
	shownDays = append(shownDays, numericDates(material)...)
	days, at := datesIn(text)
	for _, d := range days {
		if !slices.ContainsFunc(shownDays, func(s day) bool { return near(d, s) }) {
			return "names a date nothing it was shown does"
		}
	}
	// A date's numbers are judged as a date, not as figures: the 14 of
	// 2023-11-14 is no count of 14.
	text, material = blank(text, at), blank(material, shownAt)
	text = blank(text, rangeEnds(text, days, at, shownDays))
	text = blank(text, daysNear(text, shownDays))
	text = blank(text, timesShown(text, material))
	known := numbersIn(material)
	for _, s := range numberRE.FindAllString(text, -1) {
		f, ok := number(s)
		if !ok || f <= smallNumber || known[f] || namedYearRE.MatchString(s) && len(s) == 4 {
			continue
		}
		return "names a figure nothing it was shown does"
	}
	return ""
}

// dayOnlyRE is a day written without its month's name: the 14th, 14일
// (14~16일: two), 11/14 or 14/11, 11-14, 11.14 (either order; a year
// after it or not), and a Korean month alone, 12월 (English writes
// December, no figure).
var dayOnlyRE = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)\b|\b(?:(\d{1,2})\s*[-–~]\s*)?(\d{1,2})\s*일|\b(\d{1,2})[/.\-](\d{1,2})(?:[/.\-](\d{4}|\d{2}))?\b|\b(\d{1,2})\s*월`)

// timeRE is a time of day as written: 7:45, 7.45, 19.30, 3pm, 3 p.m.,
// 3시, 3시 30분.
var timeRE = regexp.MustCompile(`(?i)\b(\d{1,2})(?:[:.](\d{2})\b|\s*(?:am\b|pm\b|a\.m\.|p\.m\.|시(?:\s*(\d{1,2})\s*분)?))`)

// timesShown are the stretches of text that write a time of day material
// writes too, however each writes it (19.30 and 7:30 PM, 오후 3시 and
// 15시): its figures are that time's, not invented.
func timesShown(text, material string) [][]int {
	type clock struct{ h, m int }
	read := func(s string, m []int) (clock, bool) {
		h, _ := strconv.Atoi(s[m[2]:m[3]])
		var min int
		for _, g := range []int{4, 6} {
			if m[g] >= 0 {
				min, _ = strconv.Atoi(s[m[g]:m[g+1]])
			}
		}
		return clock{h % 12, min}, h <= 24 && min < 60
	}
	shown := map[clock]bool{}
	for _, m := range timeRE.FindAllStringSubmatchIndex(material, -1) {
		if c, ok := read(material, m); ok {
			shown[c] = true
		}
	}
	var out [][]int
	for _, m := range timeRE.FindAllStringSubmatchIndex(text, -1) {
		if c, ok := read(text, m); ok && shown[c] {
			out = append(out, m[:2])
		}
	}
	return out
}

// numericDateRE is a date a message writes in figures alone: 12/23,
// 23/12, 12.23 (a Korean habit), a year after it or not.
var numericDateRE = regexp.MustCompile(`\b(\d{1,2})[/.](\d{1,2})(?:[/.](\d{4}|\d{2}))?\b`)

// numericDates are the dates material writes in figures alone, read
// either way (12/23 and 23/12 alike): "on 12/23" in a message is the
// December 23 a summary may name.
func numericDates(material string) []day {
	var out []day
	for _, m := range numericDateRE.FindAllStringSubmatch(material, -1) {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		y, _ := strconv.Atoi(m[3])
		if y > 0 && y < 100 {
			y += 2000
		}
		for _, d := range []day{{y, a, b}, {y, b, a}} {
			if d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= 31 {
				out = append(out, d)
			}
		}
	}
	return out
}

// rangeHeadRE and rangeTailRE are the other end of a range of days
// written beside a date: "14-16 November", "November 14 and 16".
var (
	rangeHeadRE = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s*(?:[-–~]|to|and|through|until|till)\s*$`)
	rangeTailRE = regexp.MustCompile(`(?i)^\s*(?:[-–~]|to|and|through|until|till)\s*(\d{1,2})(?:st|nd|rd|th)?\b`)
)

// rangeEnds are the stretches of text that end a range of days beside
// one of its dates (days, at at): a day of the date's month within
// dateSlack of a date shown, no figure.
func rangeEnds(text string, days []day, at [][]int, shown []day) [][]int {
	var out [][]int
	for i, d := range days {
		try := func(m []int, off int) {
			if m == nil {
				return
			}
			n, _ := strconv.Atoi(text[off+m[2] : off+m[3]])
			if slices.ContainsFunc(shown, func(s day) bool { return n >= 1 && n <= 31 && near(day{d.year, d.month, n}, s) }) {
				out = append(out, []int{off + m[2], off + m[3]})
			}
		}
		try(rangeHeadRE.FindStringSubmatchIndex(text[:at[i][0]]), 0)
		try(rangeTailRE.FindStringSubmatchIndex(text[at[i][1]:]), at[i][1])
	}
	return out
}

// daysNear are the stretches of text that write a day without its
// month's name (dayOnlyRE) within dateSlack of a date shown: "on the
// 14th" of a result dated 2023-11-14, "16일에", "11/14". The day of a
// date shown is no invented figure. A stretch near none is left to the
// figures' check: "14일" may be fourteen days.
func daysNear(text string, shown []day) [][]int {
	var out [][]int
	valid := func(month, d int) bool { return month >= 1 && month <= 12 && d >= 1 && d <= 31 }
	for _, m := range dayOnlyRE.FindAllStringSubmatchIndex(text, -1) {
		sub := func(i int) int {
			if m[2*i] < 0 {
				return 0
			}
			n, _ := strconv.Atoi(text[m[2*i]:m[2*i+1]])
			return n
		}
		var ok bool
		switch {
		case m[2] >= 0:
			ok = dayOfMonthNear(sub(1), shown)
		case m[6] >= 0:
			ok = dayOfMonthNear(sub(3), shown) && (m[4] < 0 || dayOfMonthNear(sub(2), shown))
		case m[14] >= 0:
			ok = sub(7) >= 1 && sub(7) <= 12
		default:
			y := sub(6)
			if y > 0 && y < 100 {
				y += 2000
			}
			a, b := sub(4), sub(5)
			ok = slices.ContainsFunc(shown, func(s day) bool {
				return valid(a, b) && near(day{y, a, b}, s) || valid(b, a) && near(day{y, b, a}, s)
			})
		}
		if ok {
			out = append(out, m[:2])
		}
	}
	return out
}

// dayOfMonthNear says whether day n of the month of a date shown is
// within dateSlack of it: a day written alone is of the month the
// results speak of.
func dayOfMonthNear(n int, shown []day) bool {
	return slices.ContainsFunc(shown, func(s day) bool {
		y := cmp.Or(s.year, 2001)
		t := time.Date(y, time.Month(s.month), n, 0, 0, 0, 0, time.UTC)
		return t.Day() == n && near(day{y, s.month, n}, s)
	})
}

// blank writes spaces over text's stretches at.
func blank(text string, at [][]int) string {
	b := []byte(text)
	for _, a := range at {
		for i := a[0]; i < a[1]; i++ {
			b[i] = ' '
		}
	}
	return string(b)
}
