package segment

import (
	"slices"
	"strings"
	"testing"
)

// Short turns that say something must be embedded, so that search by
// meaning can find them; chatter must not be.
func TestTextKeepsShortSentences(t *testing.T) {
	// 이사 간다, decomposed (NFD), as some macOS input produces it.
	nfd := "\u110b\u1175\u1109\u1161 \u1100\u1161\u11ab\u1103\u1161"
	for _, seg := range [][]string{
		{"나 다음 달에 이사 가"},
		{"보일러 터졌어"},
		{"합격했어!"},
		{"이사 간다"},
		{nfd},
		{"차 고장났어 ㅠㅠ"},
		{"민수 내일 생일이야"},
		{"기차역에 주차된 기차"},
		{"I got the job"},
		{"It is Sunday."},
		{"I'm moving next month"},
		{"the boiler broke"},
		{"我下个月搬家"},
		{"来月引っ越します"},
		{"ok", "보일러 터졌어"},
		{"ㅋㅋㅋ", "@민수 내일 몇 시?", "세 시"},
	} {
		if Text(seg) == "" {
			t.Errorf("Text(%q) dropped a short sentence (%d units)", seg, contentUnits(strings.Join(seg, " "), 100))
		}
	}
}

func TestTextDropsChatter(t *testing.T) {
	for _, seg := range [][]string{
		{"ㅋㅋ"},
		{"ㅋㅋㅋㅋ"},
		{strings.Repeat("ㅋ", 40)},
		{"ㅇㅇ"}, {"ㄱㄱ"}, {"ㅎㅎ"}, {"ㅠㅠ"},
		{"lol"}, {"ok"}, {"yep"},
		{"ok thanks"},
		{"haha same"},
		{"hahahahahahahahahahahahahahahahaha"},
		{"lol lol lol lol lol lol lol lol lol lol"},
		{"lol", "lol", "LOL!", "ok", "yep", "ㅋㅋ"},
		{"하하하하하하하하"},
		{"네네네네"},
		{"알겠어"},
		{"헐 대박 ㅋㅋㅋ"},
		{"😂😂😂🔥"},
		{"ok 👍"},
		{"https://example.com/a/really/long/path/that/is/not/meaning?at=all"},
		{"<@123456789012345678> <:pepe_laugh:123456789012345678>"},
		{"!!!???...", "...", "?"},
		{"12345 67890 2024-05-01"},
		{"ㅋㅋㅋ", "https://youtu.be/dQw4w9WgXcQ", "lmao", "😂"},
	} {
		if got := Text(seg); got != "" {
			t.Errorf("Text(%q) = %q, want chatter dropped", seg, got)
		}
	}
}

func TestContentUnits(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"이사", 6},       // Hangul syllables: 3 each
		{"ㅋㅋ ㅎㅎ ㅠㅠ", 0}, // bare jamo: nothing
		{"move", 4},     // Latin letters: 1 each
		{"搬家", 6},       // Han: 3 each
		{"ひっこし", 8},     // kana: 2 each
		{"[link] [mention] [emoji] 123 !?", 0},
		{"hahaha", 2},       // a repeated pattern counts once
		{"noon", 4},         // ... if it really repeats
		{"yep yep Yep!", 3}, // distinct words only
		{"이사ㅋㅋ", 6},
	}
	for _, tt := range tests {
		if got := contentUnits(tt.in, 100); got != tt.want {
			t.Errorf("contentUnits(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestWindows(t *testing.T) {
	words := func(n int) string { // distinct words: repeats carry nothing
		w := make([]string, n)
		for i := range w {
			w[i] = string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + "ng"
		}
		return strings.Join(w, " ")
	}
	count := func(cs []string) []int {
		n := make([]int, len(cs))
		for i, c := range cs {
			n[i] = len(strings.Fields(Clean(c)))
		}
		return n
	}
	firsts := func(ws []Window) []int {
		out := []int{}
		for _, w := range ws {
			out = append(out, w.First)
		}
		return out
	}
	short := []string{words(10), words(10)}
	if ws := Windows(short, count(short), 100); len(ws) != 0 {
		t.Errorf("a segment that fits has windows %v", firsts(ws))
	}
	// 21 tokens a message with its separator, 50 an input: two a window;
	// a message cleaned to nothing takes no room.
	long := []string{words(20), words(20), "<@123>", words(20), words(20), words(20)}
	if got := firsts(Windows(long, count(long), 50)); !slices.Equal(got, []int{3, 5}) {
		t.Errorf("windows start at %v, want 3 5", got)
	}
	// A message longer than an input is a window of its own.
	huge := []string{words(10), words(80), words(10)}
	if got := firsts(Windows(huge, count(huge), 50)); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("windows start at %v, want 1 2", got)
	}
	// Too little text in a window: no vector for it.
	tail := []string{words(40), "ok"}
	if ws := Windows(tail, count(tail), 41); len(ws) != 0 {
		t.Errorf("a window of \"ok\": %v", firsts(ws))
	}
	many := make([]string, 100)
	for i := range many {
		many[i] = words(30)
	}
	if ws := Windows(many, count(many), 31); len(ws) != MaxWindows-1 || ws[len(ws)-1].First != MaxWindows-1 {
		t.Errorf("%d windows, last at %v; want %d", len(ws), firsts(ws), MaxWindows-1)
	}
}
