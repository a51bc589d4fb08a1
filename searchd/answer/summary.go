package answer

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"dsearch/searchd/search"
	"dsearch/shared/api"
)

// summaryTokens bounds a summary: a few sentences.
const summaryTokens = 400

// summaryPrompt keeps the model to what was found (footnote 1).
const summaryPrompt = `You answer a question about a group chat using only the numbered search results given. Rules:
- Use only facts stated in the results. Do not invent names, dates or events that are not in them.
- Cite the results you use by their numbers in square brackets, like [1] or [2][3].
- If the results do not answer the question, say so in one sentence.
- Answer briefly, in the language of the question.`

// summaryInput is what the summary model is given: the question and the
// results that clearly match it (search.Confidence), numbered as the
// response numbers them, and those numbers.
func summaryInput(q string, results []search.Result) (string, []int) {
	var b strings.Builder
	var shown []int
	fmt.Fprintf(&b, "Question: %s\n\nResults:\n", q)
	for i, r := range results {
		if !r.Confidence.High {
			continue
		}
		shown = append(shown, i+1)
		fmt.Fprintf(&b, "[%d] %s\n", i+1, time.UnixMicro(r.StartAt).UTC().Format("2006-01-02"))
		for _, m := range r.Previews {
			fmt.Fprintf(&b, "  %s: %s\n", m.AuthorName, api.MessageText(m.Content, m.Attachments))
		}
	}
	return b.String(), shown
}

var fragmentRE = regexp.MustCompile(`[\n.,;!?]+`)

// checkSummary refuses what small models write instead of a cited
// summary: citations of results they were not shown, no citation at all
// (nothing in it can be checked), or one phrase over and over until the
// token limit.
//
// It must also be written, not echoed (checkWritten): not the prompt's
// rules or the results given back, and in the question's language.
func checkSummary(answer, question, input string, shown []int) error {
	answer = withoutListMarks(answer)
	if n, bad := badCitation(answer, shown); bad {
		return fmt.Errorf("the summary cited [%d], a result it was not given", n)
	}
	if !citeRE.MatchString(answer) {
		return errors.New("the summary cites no result")
	}
	// Citations alone answer nothing ("[1][2]."): a date or a name is
	// an answer, brackets and punctuation are not.
	if !strings.ContainsFunc(citeRE.ReplaceAllString(answer, ""), func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return errors.New("the summary says nothing but its citations")
	}
	if asks(citeRE.ReplaceAllString(answer, " "), question) {
		return errors.New("the summary repeats the prompt's question")
	}
	if echoesLayout(answer) {
		return errors.New("the summary repeats the prompt's layout")
	}
	if repeats(citeRE.ReplaceAllString(answer, "")) {
		return errors.New("the summary repeats itself")
	}
	if miscites(answer, input) {
		return errors.New("the summary cites results that do not say what it does")
	}
	if placeholder(answer, input) {
		return errors.New("the summary holds a placeholder in brackets, not a citation")
	}
	return checkWritten("the summary", citeRE.ReplaceAllString(answer, " "), summaryPrompt+"\nQuestion:\nResults:", question, input, false)
}

// The prompt's own layout (summaryInput), which a small model gives back
// in place of an answer: its labels starting a line, and results listed
// as it lists them, a line starting with a citation and a date. One such
// line followed by words may be an answer ("[1] 2025-03-03: Minsu
// said..."); one with nothing after the date, or two, are a listing,
// whatever their words (SmolLM2 wrote results of its own, with messages,
// dates and years no result had).
//
// And a result's messages as it lists them: an indented line starting
// with a name and a colon ("  caroline: Hey, Caroline! I'm so glad..."),
// SmolLM2's message of its own under a date.
var (
	messageLineRE = regexp.MustCompile(`(?m)^[ \t]+[^\s:\[\]]{1,40}:[ \t]`)
	labelRE       = regexp.MustCompile(`(?mi)^\s*(?:question|results)\s*:`)
	headerRE      = regexp.MustCompile(`(?m)^\s*(?:` + citeRE.String() + `)\s*\d{4}-\d{1,2}-\d{1,2}`)
	headerLineRE  = regexp.MustCompile(`(?m)^\s*(?:` + citeRE.String() + `)\s*\d{4}-\d{1,2}-\d{1,2}\s*$`)
)

// asks says whether text is the question given back, whole or nearly: its
// words a run of the question's, four in five of them or more (three or
// more), in any language. A short answer may take a few of the
// question's words, not the question.
func asks(text, question string) bool {
	ws, qs := words(text), words(question)
	if len(ws) < 3 || 5*len(ws) < 4*len(qs) {
		return false
	}
	for i := 0; i+len(ws) <= len(qs); i++ {
		if slices.Equal(ws, qs[i:i+len(ws)]) {
			return true
		}
	}
	return false
}

// echoesLayout says whether answer gives back the prompt's layout.
func echoesLayout(answer string) bool {
	return labelRE.MatchString(answer) || headerLineRE.MatchString(answer) || len(headerRE.FindAllString(answer, 3)) >= 2 ||
		messageLineRE.MatchString(answer)
}

// repeats says whether text holds one phrase (of ten bytes or more,
// between punctuation) three times: a model looping until its token
// limit.
func repeats(text string) bool {
	seen := map[string]int{}
	for _, f := range fragmentRE.Split(strings.ToLower(text), -1) {
		if f = strings.TrimSpace(f); len(f) >= 10 {
			if seen[f]++; seen[f] == 3 {
				return true
			}
		}
	}
	return false
}

// citeRE is a bracketed group holding a number: [1], and what small
// models write besides, [2, 3], [2-3], [ 3 ], 【3】, ［３］ (full-width
// digits, as the full-width brackets come with them), and numbers alone in
// parentheses, (3), (2, 3): a reader of the results numbered [1] to [8]
// takes "(3)" for the third. Each is a citation, every number in it (a
// range: every number it spans) one that must have been shown: a list or
// a range passed unchecked, and the page then showed results the model had
// not seen under its words. Parentheses hold one or two digits a number,
// not a year or a count with its word ("(2023)", "(3 people)").
var (
	citeRE = regexp.MustCompile(bracketCite +
		`|[(（]\s*[0-9０-９]{1,2}(?:\s*[,，、\-–~]\s*[0-9０-９]{1,2})*\s*[)）]`)
	rangeRE = regexp.MustCompile(`(\d+)\s*[-–~]\s*(\d+)|(\d+)`)
)

// bracketRE is any group in square brackets; citationRE one that is only
// a citation: numbers, their separators, and the words a citation may
// name them with ([1], [2, 3], [results 2 and 3], [결과 1]); a group of
// numbers and marks without letters passes too (placeholder).
var (
	bracketRE  = regexp.MustCompile(`[\[【［][^\]】］\[【［]*[\]】］]`)
	citationRE = regexp.MustCompile(`(?i)^[\[【［](?:\s|[0-9０-９]|[,，、\-–~&]|and|results?|결과)*[0-9０-９](?:\s|[0-9０-９]|[,，、\-–~&]|and|results?|결과)*[\]】］]$`)
	linkRE     = regexp.MustCompile(`^\((\S+?)\)`)
)

// placeholder says whether answer holds a group in brackets that is not a
// citation nor found in input as it stands (an image's "[image: …]"
// line): a template's blank the model left ("[insert action mentioned
// above]", "[insert number or date mentioned in sentence 1]", which
// passed as a citation of [1]: SmolLM2). What a writer puts in brackets
// is none: an elision or a checkbox ("[…]", "[ ]"), one word ("[sic]",
// "[x]") but a blank's ("[name]"), a citation naming its result in
// another language ("[Ergebnis 1]": one word and numbers), a Markdown
// link to an address the results hold.
func placeholder(answer, input string) bool {
	for _, at := range bracketRE.FindAllStringIndex(answer, -1) {
		g := answer[at[0]:at[1]]
		if citationRE.MatchString(g) || strings.Contains(input, g) {
			continue
		}
		if m := linkRE.FindStringSubmatch(answer[at[1]:]); m != nil && strings.Contains(input, m[1]) {
			continue
		}
		var letters []string
		digits := false
		for _, w := range words(g) {
			if strings.ContainsFunc(w, unicode.IsLetter) {
				letters = append(letters, w)
			} else {
				digits = true
			}
		}
		switch {
		case len(letters) == 0:
			continue
		case len(letters) == 1 && digits && !blankWords[letters[0]]:
			continue
		case len(letters) == 1 && !digits && !blankWords[letters[0]]:
			continue
		}
		return true
	}
	return false
}

// blankWords are a template's one-word blanks ("[name]", "[date]").
var blankWords = map[string]bool{"name": true, "names": true, "date": true, "time": true, "number": true,
	"place": true, "location": true, "person": true, "user": true, "username": true, "link": true, "url": true,
	"amount": true, "event": true, "topic": true, "insert": true, "placeholder": true, "something": true, "here": true, "sentence": true}

// parenNumberRE is a number alone in parentheses, and listMarkBeforeRE
// what stands before one that numbers a list's item: the start of a line,
// a colon, a comma, a semicolon, "and" or "or".
var (
	parenNumberRE    = regexp.MustCompile(`[(（]\s*([0-9０-９]{1,2})\s*[)）]`)
	listMarkBeforeRE = regexp.MustCompile(`(?i)(?:^|[:;,：；，、]|\band|\bor|및|그리고)\s*$`)
)

// bracketCite is citeRE's bracketed citation; bracketCiteRE finds one.
const bracketCite = `[\[【［][^\]】］\[【［]*[0-9０-９][^\]】］\[【［]*[\]】］]`

var bracketCiteRE = regexp.MustCompile(bracketCite)

// withoutListMarks blanks the numbers in parentheses of answer that
// number the items of a list, not results, in an answer that cites in
// brackets: "(1) it broke, (2) ... and (3) ... [1]" over two results is
// no citation of a third. They are (1), (2) and on, in order, two or
// more, each before a word and after what starts an item
// (listMarkBeforeRE). A citation follows what it cites: "broke (1) and
// ... (2)." stays one, and so do all of an answer citing in no brackets.
func withoutListMarks(answer string) string {
	ms := parenNumberRE.FindAllStringSubmatchIndex(answer, -1)
	if len(ms) < 2 || !bracketCiteRE.MatchString(answer) {
		return answer
	}
	for i, m := range ms {
		n, _ := strconv.Atoi(halfWidth(answer[m[2]:m[3]]))
		line := answer[:m[0]]
		if j := strings.LastIndexByte(line, '\n'); j >= 0 {
			line = line[j+1:]
		}
		next, _ := utf8.DecodeRuneInString(strings.TrimLeft(answer[m[1]:], " \t"))
		if n != i+1 || !listMarkBeforeRE.MatchString(line) || !unicode.IsLetter(next) && !unicode.IsDigit(next) {
			return answer
		}
	}
	b := []byte(answer)
	for _, m := range ms {
		for k := m[0]; k < m[1]; k++ {
			b[k] = ' '
		}
	}
	return string(b)
}

// badCitation returns the first number cited of a result not shown.
func badCitation(answer string, shown []int) (int, bool) {
	for _, group := range citeRE.FindAllString(answer, -1) {
		nums, ok := citedNumbers(group)
		if !ok {
			return nums[len(nums)-1], true
		}
		for _, n := range nums {
			if !slices.Contains(shown, n) {
				return n, true
			}
		}
	}
	return 0, false
}

// namesUnshown says whether the summary names a member the model was not
// shown: someone seen in the channels searched (names) whom neither the
// question nor the results given (their text, their authors by any of
// their names: shown) name. The model cannot know who is in the server, so
// such a name is its own: an answer put in the mouth of a member who may
// have said nothing of it ("John fixed it for $500 [1]" over results by
// others). A Latin-script word counts only capitalized, as names are
// written (a member called Will or May, lower-cased, is a word).
func namesUnshown(answer, input string, shown map[int64]bool, names map[string][]int64) bool {
	given := strings.ToLower(input)
	for _, w := range strings.Fields(citeRE.ReplaceAllString(answer, " ")) {
		w = strings.Trim(w, ".,!?;:()'\"“”’")
		first, _ := utf8.DecodeRuneInString(w)
		if unicode.Is(unicode.Latin, first) && !unicode.IsUpper(first) {
			continue
		}
		_, ids := search.NamesIn(w, names)
		if len(ids) == 0 || slices.ContainsFunc(ids, func(id int64) bool { return shown[id] }) {
			continue
		}
		bare := strings.TrimSuffix(strings.ToLower(w), "'s")
		if !strings.Contains(given, bare) && !namedIn(given, ids, names) {
			return true
		}
	}
	return false
}

// namedIn says whether text (lower-cased) holds a name of one of ids.
func namedIn(text string, ids []int64, names map[string][]int64) bool {
	for n, of := range names {
		if utf8.RuneCountInString(n) >= 2 && strings.Contains(text, n) && slices.ContainsFunc(of, func(id int64) bool { return slices.Contains(ids, id) }) {
			return true
		}
	}
	return false
}

// shownAuthors are the authors of the results the summary model is given.
func shownAuthors(results []search.Result) map[int64]bool {
	out := map[int64]bool{}
	for _, r := range results {
		if r.Confidence.High {
			for _, m := range r.Previews {
				out[m.AuthorID] = true
			}
		}
	}
	return out
}
