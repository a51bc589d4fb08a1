package lexical

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func ids(hits []Hit) []int64 {
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// Deleting most messages compacts the index; what is left is still found,
// under its own ID, and nothing deleted comes back.
func TestIndexCompaction(t *testing.T) {
	x := NewIndex()
	for i := range 3000 {
		x.Put(Doc{ID: int64(i + 1), Content: fmt.Sprintf("word%d common 보일러%d", i%10, i%3)})
	}
	for i := range 2500 {
		x.Delete(int64(i + 1))
	}
	if len(x.docs) >= 3000 {
		t.Fatalf("%d docs kept after deleting 2,500 of 3,000: no compaction", len(x.docs))
	}
	hits := x.Search(Query{Terms: Terms("common"), Limit: 1000})
	if len(hits) != 500 {
		t.Fatalf("%d hits, want the 500 left", len(hits))
	}
	for _, h := range hits {
		if h.ID <= 2500 {
			t.Fatalf("deleted message %d found", h.ID)
		}
	}
	if got := x.Search(Query{Terms: Terms("보일러"), Limit: 1000}); len(got) != 500 {
		t.Errorf("보일러 (a phrase of bigrams): %d hits", len(got))
	}
	x.Put(Doc{ID: 2999, Content: "replaced"}) // an edit
	if got := x.Search(Query{Terms: Terms("replaced common"), Limit: 1000}); len(got) != 500 || got[0].ID != 2999 {
		t.Errorf("after an edit: %d hits, first %v", len(got), ids(got[:1]))
	}
}

func TestIndexTermsAndRequired(t *testing.T) {
	x := NewIndex()
	for i, c := range []string{"하하하 웃겨", "집에 가자", "우리집", "Café au lait", "steam sale on the game", "the game"} {
		x.Put(Doc{ID: int64(i + 1), Content: c})
	}
	for _, tt := range []struct {
		q    Query
		want []int64
	}{
		{Query{Terms: Terms("하하")}, []int64{1}},
		{Query{Terms: Terms("집")}, []int64{2}}, // a lone syllable begins a pair; 우리집 ends with it
		{Query{Terms: Terms("cafe")}, []int64{4}},
		{Query{Terms: Terms("game"), Required: [][]Term{Terms("steam")}}, []int64{5}},
		{Query{Required: [][]Term{Terms("steam"), Terms("웃겨")}}, []int64{1, 5}},
		{Query{Terms: Terms("game"), Filter: Filter{Channels: []int64{7}}}, nil},
	} {
		tt.q.Limit = 10
		got := ids(x.Search(tt.q))
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%+v: %v, want %v", tt.q, got, tt.want)
		}
	}
	if Supports(Query{Required: [][]Term{{{Text: "steam sale"}}}}) {
		t.Error("a phrase of Latin words needs positions the index does not keep")
	}
}

// thread finds Threads, threading and threaded; threadbare is another word.
func TestIndexInflections(t *testing.T) {
	x := NewIndex()
	for i, text := range []string{"Threads are where we talk", "threading the needle", "a threadbare coat", "학교에서 threaded"} {
		x.Put(Doc{ID: int64(i + 1), Content: text})
	}
	got := ids(x.Search(Query{Terms: Terms("thread"), Limit: 10}))
	slices.Sort(got)
	if !slices.Equal(got, []int64{1, 2, 4}) {
		t.Errorf("thread: %v, want 1, 2 and 4", got)
	}
	if got := ids(x.Search(Query{Terms: Terms("학교"), Limit: 10})); !slices.Equal(got, []int64{4}) {
		t.Errorf("학교: %v", got)
	}
}

// Each message's CJK text, which phrases are confirmed against, is its
// own, across chunks of texts, through edits, deletions and compactions:
// as the message's CJK terms say, read from its content here.
func TestPhraseTextsFollowTheirMessages(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 9))
	syllables := []rune("집에이사전세보일러수리치킨맥주")
	content := map[int64]string{}
	x := NewIndex()
	for i := range 12_000 {
		var sb strings.Builder
		for range r.IntN(6) {
			if r.IntN(3) == 0 {
				sb.WriteString("word ")
				continue
			}
			for range 1 + r.IntN(5) {
				sb.WriteRune(syllables[r.IntN(len(syllables))])
			}
			sb.WriteByte(' ')
		}
		id := int64(r.IntN(4000)) // edits: an ID put again
		x.Put(Doc{ID: id, Content: sb.String()})
		content[id] = sb.String()
		if i%7 == 0 {
			gone := int64(r.IntN(4000))
			x.Delete(gone)
			delete(content, gone)
		}
		if i == 5000 {
			x.Trim() // a sealed last chunk, appended to after
		}
	}
	if len(x.texts.chunks) < 3 {
		t.Fatalf("%d chunks of texts: the test needs several", len(x.texts.chunks))
	}
	for id, c := range content {
		n, ok := x.byID.get(x.docs, id)
		if !ok {
			t.Fatalf("message %d lost", id)
		}
		var want []string
		EachTerm(c, func(t Term) {
			if t.CJK {
				want = append(want, t.Text)
			}
		})
		if got := string(x.texts.text(x.docs, n)); got != strings.Join(want, " ") {
			t.Fatalf("message %d (doc %d): text %q, want %q", id, n, got, strings.Join(want, " "))
		}
	}
}

// Trim lets go of the arrays lists grew into while loading (appending
// leaves up to as much room again as the postings): a list with more
// than an eighth of its length to spare is copied, and the index answers
// as before.
func TestTrimGivesBackTheRoom(t *testing.T) {
	x := NewIndex()
	for i := range 5000 {
		x.Put(Doc{ID: int64(i + 1), Content: fmt.Sprintf("common w%d w%d", i%7, i%300)})
	}
	before := x.Search(Query{Terms: Terms("common w3"), Limit: 50})
	grown := map[string]*posting{}
	for tok, l := range x.postings {
		if cap(l.ps)-len(l.ps) > len(l.ps)/8 {
			grown[tok] = &l.ps[0]
		}
	}
	if len(grown) == 0 {
		t.Fatal("no room to give back: the test needs lists grown by appending")
	}
	x.Trim()
	for tok, array := range grown {
		if &x.postings[tok].ps[0] == array {
			t.Errorf("%q: %d postings still in the array they grew into", tok, len(x.postings[tok].ps))
		}
	}
	if after := x.Search(Query{Terms: Terms("common w3"), Limit: 50}); !slices.Equal(after, before) {
		t.Errorf("after Trim: %v, before %v", ids(after), ids(before))
	}
}

// A term's key in the index is its own string, not a slice of the
// message it was first (or last) seen in, which would keep that
// message's whole text alive as long as the term.
func TestTermsKeepNoMessageAlive(t *testing.T) {
	x := NewIndex()
	var texts []string
	for i := range 3 { // the later ones put terms already known
		text := strings.Repeat("filler words ", 50+i) + "needle 바늘에"
		texts = append(texts, text)
		x.Put(Doc{ID: int64(i + 1), Content: text})
	}
	for tok := range x.postings {
		at := uintptr(unsafe.Pointer(unsafe.StringData(tok)))
		for i, text := range texts {
			if from := uintptr(unsafe.Pointer(unsafe.StringData(text))); at >= from && at < from+uintptr(len(text)) {
				t.Errorf("term %q is a slice of message %d's text", tok, i+1)
			}
		}
	}
}

// TermLength counts a text as the index does, so that a text's length over
// the mean length is in messages of the average length (search's support).
func TestLengthIsTheIndexs(t *testing.T) {
	x := NewIndex()
	texts := []string{"moving to a new apartment", "다음 달에 이사를 가요", "ok", "집에 갈래? sure, 지금 갈게"}
	total := 0
	for i, s := range texts {
		x.Put(Doc{ID: int64(i + 1), Content: s})
		EachTerm(s, func(t Term) { total += TermLength(t) })
	}
	if _, _, got := x.Rarity(nil, nil); got != float64(total)/float64(len(texts)) {
		t.Errorf("mean length %.3f, want the mean Length %.3f", got, float64(total)/float64(len(texts)))
	}
}

// A long list counts its messages by channel (countedFrom), and Rarity
// over any set of channels sums those counts: the same as counting the
// messages, through deletions (counted message by message while they
// wait), compactions, and lists that grow past countedFrom as they come.
func TestRarityByChannelCountsIsTheCount(t *testing.T) {
	defer func(n int) { countedFrom = n }(countedFrom)
	countedFrom = 16
	x := NewIndex()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"moving", "boxes", "pizza", "이사", "rare"}
	type stored struct {
		channel int64
		text    string
	}
	docs := map[int64]stored{}
	id := int64(0)
	put := func() {
		id++
		var text []string
		for _, w := range words[:4] {
			if rng.IntN(3) > 0 {
				text = append(text, w)
			}
		}
		if rng.IntN(40) == 0 {
			text = append(text, "rare")
		}
		d := stored{int64(1 + rng.IntN(70)), strings.Join(text, " ")} // 70 channels: bits shared
		docs[id] = d
		x.Put(Doc{ID: id, ChannelID: d.channel, Content: d.text})
	}
	terms := []Term{{Text: "moving"}, {Text: "boxes"}, {Text: "pizza"}, {Text: "이사", CJK: true}, {Text: "rare"}}
	check := func(when string) {
		t.Helper()
		for trial := range 40 {
			var scope []int64
			in := map[int64]bool{}
			for c := int64(1); c <= 72; c++ {
				if trial == 0 || rng.IntN(4) > 0 {
					scope, in[c] = append(scope, c), true
				}
			}
			want := make([]int, len(terms))
			for _, d := range docs {
				if !in[d.channel] {
					continue
				}
				for i, term := range terms {
					if strings.Contains(d.text, term.Text) {
						want[i]++
					}
				}
			}
			if got, _, _ := x.Rarity(terms, scope); !slices.Equal(got, want) {
				t.Fatalf("%s, scope of %d channels: df %v, counted %v", when, len(scope), got, want)
			}
		}
	}
	for range 3000 {
		put()
	}
	check("after the load")
	for i := int64(1); i <= 500; i++ { // waiting deletions
		x.Delete(i)
		delete(docs, i)
	}
	check("with deletions waiting")
	for i := int64(501); i <= 1500; i++ { // enough to compact
		x.Delete(i)
		delete(docs, i)
	}
	check("after a compaction")
	for range 500 {
		put()
	}
	check("after more messages")
	x.Trim()
	check("after a trim")
}

// Rarity over some channels counts their messages only: how often a word
// is said in a channel the asker cannot read changes nothing it says.
func TestRarityIsTheChannels(t *testing.T) {
	x := NewIndex()
	id := int64(0)
	put := func(channel int64, text string) int64 {
		id++
		x.Put(Doc{ID: id, ChannelID: channel, Content: text})
		return id
	}
	put(1, "moving next month")
	gone := put(1, "moving boxes everywhere")
	put(1, "pizza tonight")
	for range 300 { // a private channel that talks of nothing else
		put(2, "moving moving layoffs 이사")
	}
	x.Delete(gone)
	terms := []Term{{Text: "moving"}, {Text: "layoffs"}, {Text: "이사", CJK: true}}
	df, n, avg := x.Rarity(terms, []int64{1})
	if df[0] != 1 || df[1] != 0 || df[2] != 0 || n != 2 || avg != 2.5 {
		t.Errorf("over channel 1: df %v, %d messages of mean length %.2f; want [1 0 0], 2, 2.5 (its live messages only)", df, n, avg)
	}
	if df, n, _ := x.Rarity(terms, nil); df[0] != 301 || df[1] != 300 || df[2] != 300 || n != 302 {
		t.Errorf("over every channel: df %v, %d messages; want [301 300 300], 302", df, n)
	}
	// Both channels named: every channel, whether a block is counted
	// whole (nothing deleted) or message by message.
	for _, deleted := range []bool{true, false} {
		if !deleted {
			x.Put(Doc{ID: gone, ChannelID: 1, Content: "moving boxes everywhere"})
			x.compactLocked()
		}
		all, n, avg := x.Rarity(terms, nil)
		if df, m, a := x.Rarity(terms, []int64{1, 2}); !slices.Equal(df, all) || m != n || a != avg {
			t.Errorf("over both channels (a message deleted: %v): df %v, %d, %.2f; over every channel %v, %d, %.2f", deleted, df, m, a, all, n, avg)
		}
		if df, _, _ := x.Rarity(terms, []int64{2}); df[0] != 300 {
			t.Errorf("over the second channel (a message deleted: %v): df %v, want 300 holding moving", deleted, df)
		}
	}
}
