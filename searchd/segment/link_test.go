package segment

import (
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestShippedLinker(t *testing.T) {
	if DefaultLinkerErr != nil || DefaultLinker == nil || DefaultRules.Linker == nil {
		t.Fatalf("shipped linker.json: %v", DefaultLinkerErr)
	}
}

// BenchmarkChoose scores a message against 50 candidates by twelve
// people, as in a busy channel.
func BenchmarkChoose(b *testing.B) {
	texts := []string{"the boiler broke again", "anyone up for games tonight?", "which keyboard did you buy", "보일러 또 고장났어"}
	var window []Line
	for i := range 50 {
		l := NewLine(int64(i), int64(i)*4e6, int64(i%12), "user", texts[i%len(texts)], []int64{int64((i + 3) % 12)})
		l.Segment = int64(i % 7)
		window = append(window, l)
	}
	m := NewLine(99, 50*4e6, 3, "user", "did the boiler get fixed?", nil)
	b.ResetTimer()
	for range b.N {
		DefaultLinker.Choose(&m, DefaultLinker.Candidates(&m, window))
	}
}

func TestTanhApprox(t *testing.T) {
	worst := 0.0
	for x := -12.0; x <= 12; x += 1.0 / 4096 {
		worst = max(worst, math.Abs(tanhApprox(x)-math.Tanh(x)))
	}
	if worst > tanhErr {
		t.Fatalf("tanhApprox errs by up to %g, over tanhErr %g", worst, tanhErr)
	}
	if tanhApprox(math.NaN()) != -1 || tanhApprox(math.Inf(1)) != 1 {
		t.Fatal("tanhApprox out of its range")
	}
}

// Choose scores exactly only the candidates that may win: it must choose
// what scoring every candidate exactly (Explain) chooses.
func TestChooseIsExact(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	words := []string{"boiler", "games", "keyboard", "보일러", "trip", "match", "moving", "주말에", "user3", "btw", "근데",
		"the", "what", "fixed", "broke", "alice", "bob"}
	names := []string{"alice", "bob", "carol", "user3", "dave", "eve", "민수", "x"}
	for n := range 3000 {
		var window []Line
		at, authors := int64(0), 1+r.Intn(10)
		for i := range 1 + r.Intn(60) {
			at += int64(r.Intn(300)) * 1e6
			var text []string
			for range 1 + r.Intn(8) {
				text = append(text, words[r.Intn(len(words))])
			}
			if r.Intn(4) == 0 {
				text = append(text, "?")
			}
			a := int64(r.Intn(authors))
			var mentions []int64
			if r.Intn(5) == 0 {
				mentions = []int64{int64(r.Intn(authors))}
			}
			l := NewLine(int64(i), at, a, names[int(a)%len(names)], strings.Join(text, " "), mentions)
			l.Segment = int64(r.Intn(1 + i/3))
			window = append(window, l)
		}
		m := window[len(window)-1]
		m.Segment = 0
		cands := DefaultLinker.Candidates(&m, window[:len(window)-1])
		// What the choice rests on: each approximate score is within
		// approxSpread of the exact one.
		l, mm := DefaultLinker, named(&m, cands)
		ctx := newContext(mm, cands)
		f, z, byFeature := make([]float64, len(LinkFeatures)), make([]float64, len(l.Hidden)), l.byFeature()
		for i := range cands {
			pairFeatures(f, mm, cands, i, ctx)
			exact, approx := l.linkScore(f, nil), l.approxActivate(l.preactivateBy(byFeature, f, z), z)
			if math.Abs(approx-exact) > l.approxSpread() {
				t.Fatalf("window %d, candidate %d: approximate score %g, exact %g: over %g apart", n, i, approx, exact, l.approxSpread())
			}
			if l.activate(l.preactivateBy(byFeature, f, z), z, nil) != exact {
				t.Fatalf("window %d, candidate %d: weights by feature change the exact score", n, i)
			}
		}
		got, want := DefaultLinker.Choose(&m, cands), DefaultLinker.Explain(&m, cands)
		want.Prob = 0
		if got != want {
			t.Fatalf("window %d: Choose %+v, Explain %+v", n, got, want)
		}
	}
}

// eachWord is strings.ToLower, then the runs of letters, digits and
// apostrophes, without allocating: the same words, invalid UTF-8 and
// case mappings that change a rune's length included.
func TestEachWordIsFieldsOfLower(t *testing.T) {
	pieces := []string{"Hello", "WORLD", "it's", "İstanbul", "ΣΊΣΥΦΟΣ", "보일러", "ㅋㅋ", "근데", "1,234", "don't!", "\xff\xfe", "x\xc3",
		"ǅ", "Ⅻ", "ﬃ", "KELVIN \u212a", " ", "\t", "?", "-", "'", "日本語", "émoji😀", "ÀÉÎ", "a", "ok", "btw"}
	r := rand.New(rand.NewSource(3))
	for n := range 20000 {
		var b strings.Builder
		for range r.Intn(8) {
			b.WriteString(pieces[r.Intn(len(pieces))])
			if r.Intn(2) == 0 {
				b.WriteByte(' ')
			}
		}
		s := b.String()
		want := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
		})
		var got []string
		eachWord(s, func(w []byte) bool { got = append(got, string(w)); return true })
		if !slices.Equal(got, want) {
			t.Fatalf("string %d %q: words %q, want %q", n, s, got, want)
		}
	}
}
