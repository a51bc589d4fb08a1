package sqlite

import (
	"context"
	"slices"
	"testing"

	"dsearch/searchd"
	"dsearch/searchd/lexical"
	"dsearch/searchd/segment"
)

// A channel filter, in SQL and with WithThreads, admits the channel's public threads, never its private
// ones (their members are not the channel's readers).
func TestChannelFilterAndThreads(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	const channel, public, private, other = 100, 101, 102, 200
	b := &searchd.Batch{Channels: []searchd.Channel{
		{ID: channel, Name: "general", Kind: "GuildTextChat"},
		{ID: public, ParentID: channel, Name: "plans", Kind: "GuildPublicThread"},
		{ID: private, ParentID: channel, Name: "secret", Kind: "GuildPrivateThread"},
		{ID: other, Name: "elsewhere", Kind: "GuildTextChat"},
	}}
	for i, ch := range []int64{channel, public, private, other} {
		m := msg(int64(i+1), 0, 0)
		m.ChannelID, m.Content = ch, "lighthouse trip"
		b.Messages = append(b.Messages, m)
	}
	if _, err := db.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	expr := lexical.MatchExpr(lexical.Terms("lighthouse"))
	for _, tt := range []struct {
		channels []int64
		want     []int64
	}{
		{[]int64{channel}, []int64{1, 2}},
		{[]int64{channel, private}, []int64{1, 2, 3}},
		{[]int64{public}, []int64{2}},
		{[]int64{other}, []int64{4}},
	} {
		hits, err := db.Lexical(ctx, expr, Filter{Channels: tt.channels}, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, h := range hits {
			got = append(got, h.MessageID)
		}
		slices.Sort(got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("channels %v: messages %v, want %v", tt.channels, got, tt.want)
		}
		// WithThreads, the same filter outside SQL, agrees.
		f, err := db.WithThreads(ctx, Filter{Channels: tt.channels})
		if err != nil {
			t.Fatal(err)
		}
		var admitted []int64
		for _, m := range b.Messages {
			if slices.Contains(f.Channels, m.ChannelID) {
				admitted = append(admitted, m.ID)
			}
		}
		if !slices.Equal(admitted, tt.want) {
			t.Errorf("WithThreads, channels %v: messages %v, want %v", tt.channels, admitted, tt.want)
		}
	}
}

// A query word finds its English inflections on the FTS5 side too
// (lexical.Forms), as the in-memory index does by stemming; Korean
// two-syllable words still match inside longer ones.
func TestLexicalInflections(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	b := &searchd.Batch{Channels: []searchd.Channel{{ID: 10, Name: "general", Kind: "GuildTextChat"}}}
	for i, text := range []string{"Threads are where we talk", "she replied at once", "a threadbare coat", "학교에서 만나", "nothing here"} {
		m := msg(int64(i+1), 0, 0)
		m.ChannelID, m.Content = 10, text
		b.Messages = append(b.Messages, m)
	}
	if _, err := db.Apply(ctx, b, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]int64{"thread": {1}, "threading": {1}, "replies": {2}, "학교": {4}} {
		hits, err := db.Lexical(ctx, lexical.MatchExpr(lexical.Terms(q)), Filter{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, h := range hits {
			got = append(got, h.MessageID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
}
