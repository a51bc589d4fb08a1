package search

import "strings"

// Stopword says whether w (lower case) is an English word that says
// nothing of a question's topic: the question planner keeps it out of
// keywords, the summary checks count it to tell English, and support
// leaves it out.
func Stopword(w string) bool { return stopwords[w] }

var stopwords = wordSet(`the and for with what who whom whose which when where why how did does was were are
	has have had that this these those from about into than then there their they them she her his him you your
	our not any all can could would should will say said tell told talk talked conversation chat
	happen happened happens happening`)

// dateNames name months and weekdays: in a question they are its time,
// which the time filter takes, not its topic.
var dateNames = wordSet(`january february march april may june july august september october november december
	monday tuesday wednesday thursday friday saturday sunday`)

func wordSet(words string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}
