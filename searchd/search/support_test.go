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
