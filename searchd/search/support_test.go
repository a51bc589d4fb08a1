package search

import (
	"strings"
	"testing"
)

// Support reads every word of a message, however long: a KorQuAD
// paragraph holds its question's words past the first 64 words or 1,024
// bytes, where a query's terms stop (ko-qa-dev's answer to "전기기타에서
// 강철, 니켈, 구리 … 부분은 무엇인가?" counted 1 of its 9 words, not 6).
func TestSupportReadsWholeMessages(t *testing.T) {
	long := strings.Repeat("기타의 소리는 픽업에서 나온다. ", 60) + "강철 니켈 구리 도체"
	if got := support(topicTerms("강철, 니켈, 구리 등의 도체"), nil, []string{long}); got != 0.8 {
		t.Errorf("support %.2f over a %d-byte message holding 4 of the 5 words at its end, want 0.80", got, len(long))
	}
}

// windowFound counts a question's words only within the best span of a
// long message: words scattered over a paragraph are not found together.
func TestWindowFound(t *testing.T) {
	terms := topicTerms("red apple basket market")
	filler := strings.Repeat("nothing here at all ", 10) // 40 words
	scattered := "red " + filler + "apple " + filler + "basket " + filler + "market"
	close := filler + "a red apple in a basket at the market " + filler
	for _, c := range []struct {
		name  string
		texts []string
		span  int
		want  int
	}{
		{"scattered, short span", []string{scattered}, 8, 1},
		{"scattered, span over all", []string{scattered}, 200, 4},
		{"together", []string{close}, 10, 4},
		{"together, span too short", []string{close}, 4, 2},
		{"union over short messages", []string{"red apple", "basket", "the market"}, 3, 4},
		{"nothing", []string{filler}, 8, 0},
	} {
		if got := windowFound(terms, c.texts, c.span); got != c.want {
			t.Errorf("%s: found %d within a span of %d, want %d", c.name, got, c.span, c.want)
		}
	}
}
