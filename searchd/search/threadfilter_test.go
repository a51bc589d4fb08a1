package search

import (
	"context"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// A channel filter that names a category (an ordinary channel's parent_id
// is its category, searchd.Channel) brings only public threads, not the
// category's channels: the condition admitted any child that was not a
// private thread.
func TestCategoryFilterBringsNoChannels(t *testing.T) {
	const category, staff = 500, 501
	s := setup(t)
	ctx := context.Background()
	if _, err := s.DB.Apply(ctx, &searchd.Batch{
		Channels: []searchd.Channel{{ID: category, GuildID: 9, Kind: "GuildCategory", Name: "Staff area"},
			{ID: staff, GuildID: 9, ParentID: category, Kind: "GuildTextChat", Name: "staff"}},
		Messages: []searchd.Message{m(900, staff, bob, 60*time.Hour, "STAFFSECRET the boiler budget is approved")},
	}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{Lexical} {
		resp := run(t, s, Request{Query: "boiler budget", Mode: mode, Filter: sqlite.Filter{Channels: []int64{category}}})
		for _, r := range resp.Results {
			for _, p := range r.Previews {
				if strings.Contains(p.Content, "STAFFSECRET") {
					t.Errorf("%s: a filter naming category %d returned channel %d's message", mode, category, p.ChannelID)
				}
			}
		}
	}
}

// A thread row whose kind is not known (empty, from a client that left it
// out) is not searched as a public thread of its parent: it was.
func TestThreadWithoutKindIsNotPublic(t *testing.T) {
	const thread = 601
	s := setup(t)
	ctx := context.Background()
	if _, err := s.DB.Apply(ctx, &searchd.Batch{
		Channels: []searchd.Channel{{ID: thread, GuildID: 9, ParentID: general, Name: "hr-case"}},
		Messages: []searchd.Message{m(901, thread, bob, 60*time.Hour, "STAFFSECRET the boiler budget is approved")},
	}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	resp := run(t, s, Request{Query: "boiler budget", Mode: Lexical, Filter: sqlite.Filter{Channels: []int64{general}}})
	for _, r := range resp.Results {
		for _, p := range r.Previews {
			if strings.Contains(p.Content, "STAFFSECRET") {
				t.Errorf("a thread of unknown kind was searched as a public thread of its parent")
			}
		}
	}
}
