package answer

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"dsearch/searchd/search"
)

// What a summary says must come from what its model was shown: its
// sentences from the results they cite, the names it writes from the
// question and the results (its dates and figures: figures.go). A small
// model cites [1] for what [2] says (SmolLM2: "Gina interviewed for a
// design internship in 2023. [1] 2023-05-28 was a great day", over a [1]
// about something else) and names people nobody mentioned.

// resultHeadRE starts a result in the summary's input (summaryInput).
var resultHeadRE = regexp.MustCompile(`(?m)^\[(\d+)\] `)

// resultTexts is the text of each result in input by its number: its
// date line and its messages.
func resultTexts(input string) map[int]string {
	out := map[int]string{}
	heads := resultHeadRE.FindAllStringSubmatchIndex(input, -1)
	for i, h := range heads {
		end := len(input)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		n, _ := strconv.Atoi(input[h[2]:h[3]])
		out[n] = input[h[0]:end]
	}
	return out
}

// citedNumbers are the result numbers a citation group names (a range:
// every number it spans), full-width digits read as digits; ok is false
// for a range that is not one (backwards, or over 50).
func citedNumbers(group string) (nums []int, ok bool) {
	group = halfWidth(group)
	for _, m := range rangeRE.FindAllStringSubmatch(group, -1) {
		lo, hi := m[3], m[3]
		if m[3] == "" {
			lo, hi = m[1], m[2]
		}
		a, errA := strconv.Atoi(lo)
		b, errB := strconv.Atoi(hi)
		if errA != nil || errB != nil || b < a || b-a > 50 {
			return append(nums, a), false
		}
		for n := a; n <= b; n++ {
			nums = append(nums, n)
		}
	}
	return nums, true
}

// citesFirst says whether the text before an answer's first citation is
// nothing, or a date alone ("2023-08-25: [1] ..."): the answer starts
// with its citation. A figure is an answer ("3 [1]").
func citesFirst(text string) bool {
	t := strings.TrimFunc(text, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
	return t == "" || isoRE.MatchString(t) && len(isoRE.FindString(t)) == len(t)
}

// halfWidth reads full-width digits (０-９, as full-width brackets bring
// them) as digits.
func halfWidth(s string) string {
	return strings.Map(func(r rune) rune {
		if '０' <= r && r <= '９' {
			return r - '０' + '0'
		}
		return r
	}, s)
}

// clause is a stretch of a summary and the results cited for it.
type clause struct {
	text  string
	cited []int
}

// leadingRE is a line that starts with citations, after a list's mark or
// not ("[1] Gina said...", "- [2][3] Minsu..."): a listing, each line
// citing what follows its citations.
var leadingRE = regexp.MustCompile(`(?m)^([ \t]*(?:[-*•]|\d{1,2}\.)?[ \t]*)((?:(?:` + citeRE.String() + `)[ \t]*:?[ \t]*)+)(.*)$`)

// clauses splits answer at its citations: the text before each citation
// (citations side by side, [1][2], cite one stretch together), a line
// starting with citations citing the rest of the line (leadingRE). Text
// after the last citation is cited by it only when the answer starts with
// a citation, as a listing does ("[1] Gina said..."); otherwise it is
// uncited and not judged here. (A start of digits alone, a date, counts
// as none.)
func clauses(answer string) []clause {
	// A line's leading citations are read as if they ended it.
	answer = leadingRE.ReplaceAllString(answer, "${1}${3} ${2}")
	var out []clause
	prev := 0
	for _, m := range citeRE.FindAllStringIndex(answer, -1) {
		nums, _ := citedNumbers(answer[m[0]:m[1]])
		text := answer[prev:m[0]]
		prev = m[1]
		if len(out) > 0 && strings.TrimFunc(text, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) == "" {
			out[len(out)-1].cited = append(out[len(out)-1].cited, nums...)
			continue
		}
		out = append(out, clause{text, nums})
	}
	if len(out) > 0 && prev < len(answer) && citesFirst(out[0].text) {
		out = append(out, clause{answer[prev:], out[len(out)-1].cited})
	}
	return out
}

// miscites says whether a stretch of answer cites results that do not
// hold what it says while another result does: of the stretch's words
// found in any result (search.TopicWordsHeld), the ones it cites hold
// fewer than half, and one result it does not cite holds two or more
// words more than they do. A stretch whose words no result holds is not
// judged here (its figures and names are: inventsFigure, namesUnshown),
// nor one that takes a word or two from elsewhere.
func miscites(answer, input string) bool {
	texts := resultTexts(input)
	nums := make([]int, 0, len(texts))
	for n := range texts {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	all := make([]string, len(nums))
	for i, n := range nums {
		all[i] = texts[n]
	}
	for _, c := range clauses(answer) {
		found, cited := 0, 0
		other := make([]int, len(nums))
		for _, holders := range search.TopicWordsHeld(c.text, all) {
			if !slices.Contains(holders, true) {
				continue
			}
			found++
			inCited := false
			for i, h := range holders {
				if h && slices.Contains(c.cited, nums[i]) {
					inCited = true
				}
			}
			if inCited {
				cited++
			}
			for i, h := range holders {
				if h && !slices.Contains(c.cited, nums[i]) {
					other[i]++
				}
			}
		}
		if 2*cited < found && slices.Max(append(other, 0)) >= cited+2 {
			return true
		}
	}
	return false
}

// inventsName says whether text, written in Latin letters over material
// in Latin letters only, names someone or something material never does:
// a capitalized word inside a sentence (not its first word, not "I" or
// "OK", not a month or a day) that no word of material is. Over material with
// other scripts a capitalized word may be a name spelled out from them
// (부산, Busan), and is not judged.
func inventsName(text, material string) bool {
	if strings.ContainsFunc(material, func(r rune) bool { return unicode.IsLetter(r) && !unicode.Is(unicode.Latin, r) }) {
		return false
	}
	known := map[string]bool{}
	for _, w := range words(material) {
		known[w] = true
	}
	text = citeRE.ReplaceAllString(text, " ")
	// A line starts a sentence (a list's item), and so does a word after
	// a stop standing alone ("broke [1]. Overall").
	text = strings.ReplaceAll(text, "\n", " . ")
	first := true
	for _, f := range strings.Fields(text) {
		// A word's first part: Gina's is Gina, I'm is I.
		ws := words(f)
		if len(ws) == 0 {
			first = first || ends(f)
			continue
		}
		r, _ := utf8.DecodeRuneInString(strings.TrimLeftFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
		w := ws[0]
		if !first && unicode.IsUpper(r) && utf8.RuneCountInString(w) > 1 && !known[w] && !search.Stopword(w) && !calendarWord(w) && w != "ok" {
			return true
		}
		first = ends(f)
	}
	return false
}

// ends says whether word f ends a sentence: a stop, a closing quote or
// bracket after it or not ('plumber."', 'all.)').
func ends(f string) bool {
	f = strings.TrimRight(f, `"')]}”’»`)
	return f != "" && strings.ContainsAny(f[len(f)-1:], ".!?:")
}

// calendarWords are capitalized in English wherever they stand: months
// (when.go's months), weekdays, short or not, one or many (Tuesdays), and
// a time's AM and PM.
func calendarWord(w string) bool {
	_, month := months[w]
	days := []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
		"mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "am", "pm"}
	return month || slices.Contains(days, w) || strings.HasSuffix(w, "days") && slices.Contains(days, strings.TrimSuffix(w, "s"))
}
