package answer

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"dsearch/searchd/internal/script"
	"dsearch/searchd/search"
)

// What a small model writes instead of a summary, checked in its words:
// the prompt's own instructions, the material copied out whole, or
// another language. Each check is about what the text is, not about the
// model: Gemma 3 270M and SmolLM2 135M's real outputs that passed the
// older checks are the tests (summary_test.go).

// echoRun is how many words in a row taken from the instructions make a
// text an echo of them: no answer about a chat needs five words of the
// prompt's rules in a row.
const echoRun = 5

// copyRun is the shortest run of words counted as copied from the
// material; copyShare of a text's words in such runs, and at least
// copyWords of them, make it a copy rather than an answer that quotes.
const (
	copyRun   = 6
	copyShare = 0.6
	copyWords = 16
)

// words lower-cases text and splits it into runs of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r)
	})
}

// ngrams is the set of runs of n words of ws, joined by spaces.
func ngrams(ws []string, n int) map[string]bool {
	out := map[string]bool{}
	for i := 0; i+n <= len(ws); i++ {
		out[strings.Join(ws[i:i+n], " ")] = true
	}
	return out
}

// inRuns marks the words of ws inside a run of n words found in set.
func inRuns(ws []string, n int, set map[string]bool) []bool {
	in := make([]bool, len(ws))
	for i := 0; i+n <= len(ws); i++ {
		if set[strings.Join(ws[i:i+n], " ")] {
			for j := i; j < i+n; j++ {
				in[j] = true
			}
		}
	}
	return in
}

// echoes says whether text repeats echoRun words in a row of the
// instructions it was given.
func echoes(text, instructions string) bool {
	ws := words(text)
	return len(ws) >= echoRun && slices.Contains(inRuns(ws, echoRun, ngrams(words(instructions), echoRun)), true)
}

// copies says whether text is mostly the material copied out: copyShare
// of its words, and copyWords or more, in runs of copyRun words found in
// it. An answer quoting a line of a message is not a copy.
func copies(text, material string) bool {
	return copiesAt(text, material, copyWords, copyShare)
}

// A catch-up line is one line about a whole conversation: one of its
// messages given back (lineCopyShare of the line's words, lineCopyWords or
// more) is not a summary of it.
const (
	lineCopyShare = 0.8
	lineCopyWords = copyRun
	// givenBackShare of a message's words found in a line make the line
	// that message given back (givesBack).
	givenBackShare = 0.5
)

// givesBack says whether line reproduces half or more of one of messages
// (lines of "- " and a message), measured from the message's side: of
// a message of three runs or more, givenBackShare of its words in runs of
// copyRun words found in line. A message given back with a few words
// changed and a sentence added is under copiesAt's share of the line,
// and is still one message, not the conversation (SmolLM2's "Hey Maria,
// I'm here for you. Last Friday..."); a line quoting a phrase of a long
// message is not.
func givesBack(line string, messages string) bool {
	runs := ngrams(words(line), copyRun)
	for _, m := range strings.Split(messages, "\n") {
		ws := words(m)
		if len(ws) < 3*copyRun {
			continue
		}
		n := 0
		for _, in := range inRuns(ws, copyRun, runs) {
			if in {
				n++
			}
		}
		if float64(n) >= givenBackShare*float64(len(ws)) {
			return true
		}
	}
	return false
}

func copiesAt(text, material string, copyWords int, copyShare float64) bool {
	ws := words(text)
	n := 0
	for _, in := range inRuns(ws, copyRun, ngrams(words(material), copyRun)) {
		if in {
			n++
		}
	}
	return n >= copyWords && float64(n) >= copyShare*float64(len(ws))
}

// script is a writing system, as far as telling languages apart needs.
// ownWords are the words of text that are not in material: what the
// writer wrote, apart from the names and words it took from what it was
// shown (a Korean answer may name Caroline).
func ownWords(text, material string) []string {
	in := map[string]bool{}
	for _, w := range words(material) {
		in[w] = true
	}
	var out []string
	for _, w := range words(text) {
		if !in[w] {
			out = append(out, w)
		}
	}
	return out
}

// minWords is how many words a text needs before one without a word in
// the question's script is taken as in another language: a reply of a
// few names or titles ("Alex, Sam [1]") may have none.
const minWords = 5

// wordCount is the number of words counted in n (script.Words).
func wordCount(n map[script.Script]int) int {
	total := 0
	for _, c := range n {
		total += c
	}
	return total
}

// minLetters is how many letters of its own a text needs before its
// language is judged: a short reply made of names and numbers has none.
const minLetters = 12

// otherLanguage says why text is not in the language of want (the
// question, or the messages a catch-up line is about), or "" when it is
// or cannot be told. Only the text's own words count (ownWords). With
// mixed (a conversation), each script of a third of want's words or more
// is its language: friends write Korean and English in one conversation,
// and a line in either tells it.
func otherLanguage(text, want, material string, mixed bool) string {
	own := ownWords(text, material+" "+want)
	got := script.Letters(strings.Join(own, " "))
	total := 0
	for _, n := range got {
		total += n
	}
	wantScripts := script.Letters(want + " " + material)
	for s, n := range got {
		if wantScripts[s] == 0 && n >= 3 {
			return "is written in a script neither the question nor the results use"
		}
	}
	ws := mainScript(want)
	if ws == script.None {
		return ""
	}
	langs := []script.Script{ws}
	if mixed {
		n := script.Words(want)
		for s := script.Latin; s <= script.Other; s++ {
			if s != ws && n[s] > 0 && 3*n[s] >= wordCount(n) {
				langs = append(langs, s)
			}
		}
	}
	// Taken words may be in any script, but a sentence in the question's
	// language has some of its own: an English answer to a Korean
	// question made of the results' English words was taken.
	all := script.Words(text)
	if wordCount(all) >= minWords && !slices.ContainsFunc(langs, func(s script.Script) bool { return all[s] > 0 }) {
		return "is not in the language of the question"
	}
	if total < minLetters {
		return ""
	}
	gs := mainScript(strings.Join(own, " "))
	if !slices.Contains(langs, gs) {
		return "is not in the language of the question"
	}
	if gs == script.Latin && isEnglish(words(want)) && len(own) >= 8 && !isEnglish(words(text)) {
		return "is not in the language of the question"
	}
	return ""
}

// mainScript is the script most of text's words are in, a tie going to
// the script that is not Latin. Counted in words, not letters
// (script.Words): a Korean syllable holds what two or three Latin letters
// do, and by letters "Pokemon 새 게임 누가 샀어?" was an English question, a
// Korean answer to it refused and an English one taken; in a tie the
// Latin words are a title or a name in a Korean sentence ("Death
// Stranding 엔딩 어땠대?").
func mainScript(text string) script.Script {
	n := script.Words(text)
	best := script.Dominant(n)
	if best == script.Latin {
		for s := script.Latin + 1; s <= script.Other; s++ {
			if n[s] == n[best] {
				return s
			}
		}
	}
	return best
}

// isEnglish says whether a twentieth or more of ws are frequent English
// words (stopwords): an English text of a sentence or more has some, a
// text in another language in Latin letters (Indonesian, Spanish)
// hardly any.
func isEnglish(ws []string) bool {
	n := 0
	for _, w := range ws {
		if search.Stopword(w) {
			n++
		}
	}
	return n > 0 && 20*n >= len(ws)
}

// namedYearRE is a year as a text writes one: 1900 to 2099, alone or in a
// date (2023-05-08, 2023년).
var namedYearRE = regexp.MustCompile(`\b(?:19|20)\d\d\b`)

// inventsYear returns a year text names that is more than one year from
// every year in material (the results, with their dates, and the
// question), or "": a year no message or date led to is made up (SmolLM2
// wrote 1984, 2026 and 2027 about messages of 2025). One year either way
// is what "last year" or "next year" in a message dated so means.
func inventsYear(text, material string) string {
	var known []int
	for _, y := range namedYearRE.FindAllString(material, -1) {
		n, _ := strconv.Atoi(y)
		known = append(known, n)
	}
	for _, y := range namedYearRE.FindAllString(text, -1) {
		n, _ := strconv.Atoi(y)
		if !slices.ContainsFunc(known, func(k int) bool { return k-1 <= n && n <= k+1 }) {
			return y
		}
	}
	return ""
}

// checkWritten refuses a text that echoes instructions, copies material
// wholesale or is in another language than want: what every LLM text
// shown to a user must pass (a summary, a catch-up line). The error
// never quotes the text.
func checkWritten(what, text, instructions, want, material string, mixed bool) error {
	switch {
	case echoes(text, instructions):
		return errors.New(what + " repeats the prompt's instructions")
	case copies(text, material):
		return errors.New(what + " copies out what it was shown")
	case inventsYear(text, material+" "+want) != "":
		return errors.New(what + " names a year nothing it was shown does")
	}
	if why := inventsFigure(text, material+" "+want); why != "" {
		return errors.New(what + " " + why)
	}
	if inventsName(text, material+" "+want) {
		return errors.New(what + " names someone or something nothing it was shown does")
	}
	if why := otherLanguage(text, want, material, mixed); why != "" {
		return errors.New(what + " " + why)
	}
	return nil
}
