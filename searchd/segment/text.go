package segment

import (
	"regexp"
	"strings"
	"unicode"
)

// Limits of the embedding text.
const (
	// MinTextUnits: a segment whose text holds fewer content units
	// (see contentUnits) is not embedded: "ㅋㅋ", "ok", "yep", an emoji or
	// a bare link never match a search by meaning, and each vector costs
	// memory and embedding time. The blog's rule was 30 characters, which
	// drops most whole Korean sentences ("나 다음 달에 이사 가" is 11); ten
	// units is about ten English letters or four Hangul syllables: what
	// two acknowledgements ("ok thanks", "haha same", "알겠어", "헐 대박")
	// stay under and a clause with a subject and a verb ("I got the job",
	// "이사 간다", "합격했어") reaches.
	MinTextUnits = 10
	// MaxTextMessages: only a segment's first messages are embedded.
	MaxTextMessages = 200
	// Separator joins a segment's messages.
	Separator = " / "
)

var (
	linkRE    = regexp.MustCompile(`(?i)\b(?:https?|ftp)://[^\s<>]+|\bwww\.[^\s<>]+`)
	mentionRE = regexp.MustCompile(`<(?:@[!&]?|#)\d+>|@(?:everyone|here)\b`)
	// Exports render a mention as @name: an @ that starts a word.
	atNameRE = regexp.MustCompile(`(^|\s)@[^\s@]+`)
	emojiRE  = regexp.MustCompile(`<a?:[A-Za-z0-9_~]+:\d+>`)
	// Exports render custom emoji as :name:. A name must hold a letter so
	// that times such as 10:30:00 are left alone.
	emojiNameRE = regexp.MustCompile(`:[A-Za-z0-9_~]*[A-Za-z][A-Za-z0-9_~]*:`)
	spaceRE     = regexp.MustCompile(`\s+`)
)

// Clean prepares one message for embedding: links, mentions and custom
// emoji become placeholders, so a long meaningless string does not jostle
// the vector, and whitespace collapses. Author names are never added: the
// speaker would outweigh the topic.
func Clean(content string) string {
	if !strings.ContainsAny(content, "<:@/.") {
		// Nothing a placeholder would replace: skip the regexps, which
		// rescoring would otherwise run on every candidate message.
		return strings.Join(strings.Fields(content), " ")
	}
	s := linkRE.ReplaceAllString(content, "[link]")
	s = mentionRE.ReplaceAllString(s, "[mention]")
	s = atNameRE.ReplaceAllString(s, "${1}[mention]")
	s = emojiRE.ReplaceAllString(s, "[emoji]")
	s = emojiNameRE.ReplaceAllString(s, "[emoji]")
	return strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
}

// Text is the embedding text of a segment whose message contents are given
// in time order: at most MaxTextMessages cleaned messages joined by
// Separator. It is "" when the text is not worth embedding: under
// MinTextUnits content units.
func Text(contents []string) string {
	parts, _ := Parts(contents)
	return TextOf(parts)
}

// Parts are the messages Text joins: the cleaned contents that are not
// empty, of the first MaxTextMessages, and their indexes in contents.
func Parts(contents []string) (parts []string, at []int) {
	if len(contents) > MaxTextMessages {
		contents = contents[:MaxTextMessages]
	}
	parts = make([]string, 0, len(contents))
	for i, c := range contents {
		if c = Clean(c); c != "" {
			parts = append(parts, c)
			at = append(at, i)
		}
	}
	return parts, at
}

// TextOf is Text of the parts Parts gives: "" when not worth embedding.
func TextOf(parts []string) string {
	s := strings.Join(parts, Separator)
	if contentUnits(s, MinTextUnits) < MinTextUnits {
		return ""
	}
	return s
}

// placeholders are what Clean puts for links, mentions and custom emoji.
var placeholders = strings.NewReplacer("[link]", " ", "[mention]", " ", "[emoji]", " ")

// contentUnits measures how much meaning a cleaned text can carry, in
// Latin-letter equivalents, counting up to enough and stopping there. A
// character count cannot tell "나 다음 달에 이사 가" (11 characters, a whole
// sentence) from "ㅋㅋㅋㅋㅋㅋㅋㅋㅋㅋㅋ" (11 characters of laughter), so
// each letter counts for what it carries:
//
//   - a Hangul syllable or a Han ideograph: 3 (a syllable or a morpheme,
//     like three or so Latin letters: Korean text is about a third as
//     long as its English translation);
//   - a kana: 2 (a mora);
//   - any other letter: 1;
//   - bare Hangul jamo (ㅋ ㅎ ㅇ ㄱ ㅠ ㅜ), digits, punctuation, symbols,
//     emoji and the placeholders: 0 (laughter, reactions, decoration,
//     and a link says nothing of what it links to).
//
// Only distinct words count, and a word that repeats a pattern of up to
// three letters counts as the pattern once, so "lol lol lol", "hahahaha",
// "하하하하" and "네네네" weigh what one of them does.
func contentUnits(s string, enough int) int {
	seen := map[string]bool{}
	units := 0
	for _, w := range strings.Fields(placeholders.Replace(s)) {
		var letters []rune
		for _, r := range strings.ToLower(w) {
			if runeUnits(r) > 0 {
				letters = append(letters, r)
			}
		}
		letters = letters[:period(letters)]
		k := string(letters)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		for _, r := range letters {
			units += runeUnits(r)
		}
		if units >= enough {
			break
		}
	}
	return units
}

// runeUnits is what one character counts for in contentUnits.
func runeUnits(r rune) int {
	switch {
	case r >= 0xAC00 && r <= 0xD7A3: // precomposed Hangul syllables
		return 3
	case r >= 0x1100 && r <= 0x115F, r >= 0xA960 && r <= 0xA97F:
		// A leading consonant of a decomposed (NFD) syllable stands for
		// the syllable; its vowel and final consonant count nothing.
		return 3
	case unicode.Is(unicode.Hangul, r): // jamo: ㅋㅋ, ㅇㅇ, ㅠㅠ
		return 0
	case unicode.Is(unicode.Han, r):
		return 3
	case unicode.In(r, unicode.Hiragana, unicode.Katakana):
		return 2
	case unicode.IsLetter(r):
		return 1
	}
	return 0
}

// period is the length of the shortest pattern of up to three runes that
// w repeats at least twice from start to end ("hahah": 2, "noon": 4),
// else len(w).
func period(w []rune) int {
	for p := 1; p <= 3 && 2*p <= len(w); p++ {
		i := p
		for i < len(w) && w[i] == w[i-p] {
			i++
		}
		if i == len(w) {
			return p
		}
	}
	return len(w)
}

// MaxWindows bounds the windows of one segment (8 × 512 tokens covers the
// 200 messages of MaxTextMessages at chat lengths).
const MaxWindows = 8

// Window is a run of a segment's messages embedded on its own: messages
// First (0-based, time order) up to To, as Text.
type Window struct {
	First, To int
	Text      string
}

// Windows splits a segment too long for the model's input into further
// windows. Window 0 is Text(contents), which the model cuts at its limit;
// each further window starts at the first message the previous one could
// not hold whole and takes messages while they fit, so the whole
// conversation is seen. tokens[i] is contents[i]'s cleaned length in model
// tokens and limit what one input holds. It returns the windows after the
// first (none for a segment that fits), each worth embedding.
func Windows(contents []string, tokens []int, limit int) []Window {
	if len(contents) > MaxTextMessages {
		contents = contents[:MaxTextMessages]
	}
	var out []Window
	start, used := 0, 0
	for i, c := range contents {
		n := tokens[i] + 1 // and the separator
		if Clean(c) == "" {
			continue
		}
		if used+n <= limit || i == start {
			used += n
			continue
		}
		// Message i does not fit: the window before it ends here.
		if start > 0 {
			out = appendWindow(out, contents, start, i)
		}
		if len(out) == MaxWindows-1 {
			return out
		}
		start, used = i, n
	}
	if start > 0 {
		out = appendWindow(out, contents, start, len(contents))
	}
	return out
}

func appendWindow(out []Window, contents []string, from, to int) []Window {
	if t := Text(contents[from:to]); t != "" {
		out = append(out, Window{First: from, To: to, Text: t})
	}
	return out
}
