package segment

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Limits of the embedding text, from the blog.
const (
	// MinTextChars: a segment whose joined text is shorter is not
	// embedded; two or three "yep"s never match a search anyway.
	MinTextChars = 30
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
// Separator. It is "" when the text is under MinTextChars characters.
func Text(contents []string) string {
	if len(contents) > MaxTextMessages {
		contents = contents[:MaxTextMessages]
	}
	parts := make([]string, 0, len(contents))
	for _, c := range contents {
		if c = Clean(c); c != "" {
			parts = append(parts, c)
		}
	}
	s := strings.Join(parts, Separator)
	if utf8.RuneCountInString(s) < MinTextChars {
		return ""
	}
	return s
}
