package lexical

import (
	"fmt"
	"slices"
	"testing"
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
