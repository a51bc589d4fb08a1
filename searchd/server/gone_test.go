package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
)

// POST /v1/gone names, of the IDs asked about, what searchd no longer
// holds, whichever way it went: a deletion, a deleted channel, a server
// the bot left, an opt-out, searchd forget --author; what it still holds
// is not named.
func TestGoneNamesWhatSearchdNoLongerHolds(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	at := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	msg := func(id, channel, author api.ID) api.MessageUpsert {
		guild := api.ID(1)
		if channel == 84 {
			guild = 2
		}
		return api.MessageUpsert{ID: id, ChannelID: channel, GuildID: guild, Author: api.Author{ID: author, Username: "u" + author.String()},
			CreatedAt: at.Add(time.Duration(id) * time.Second), Content: "gone test"}
	}
	if _, err := f.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{
		msg(8001, 81, 51), msg(8002, 81, 52), msg(8003, 82, 53), msg(8004, 81, 54), msg(8005, 81, 55), msg(8006, 81, 56), msg(8007, 84, 57)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.PostMessages(ctx, &api.MessageBatch{Deletes: []api.ID{8002}, ForgetChannels: []api.ID{82}, ForgetGuilds: []api.ID{2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.OptOut(ctx, 54); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Forget(ctx, sqlite.ForgetFilter{Author: 55}, segment.DefaultRules); err != nil { // searchd forget --author
		t.Fatal(err)
	}
	got, err := f.c.Gone(ctx, &api.GoneRequest{
		Messages: []api.ID{8001, 8002, 8003, 8004, 8005, 8006, 8007}, // 8007: a server left, no tombstone
		Authors:  []api.ID{51, 52, 53, 54, 55, 56},
		Channels: []api.ID{81, 82, 83}, // 83: never stored, not gone
	})
	// 53's one message went with its channel; their name, still known,
	// is not gone (the message is).
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want []api.ID
	}{{"messages", got.Messages, []api.ID{8002, 8003, 8004, 8005, 8007}}, {"authors", got.Authors, []api.ID{54, 55}},
		{"channels", got.Channels, []api.ID{82}}} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("gone %s: %v, want %v", c.what, c.got, c.want)
		}
	}
	// Nothing asked, nothing gone; too many IDs refused.
	if got, err := f.c.Gone(ctx, &api.GoneRequest{}); err != nil || len(got.Messages)+len(got.Authors)+len(got.Channels) > 0 {
		t.Errorf("an empty request: %+v, %v", got, err)
	}
	ids := strings.Repeat(`"1",`, api.MaxGoneIDs) + `"1"`
	if code, _ := f.raw(t, "POST", "/v1/gone", fmt.Sprintf(`{"messages":[%s]}`, ids)); code != 400 {
		t.Errorf("%d IDs: status %d, want 400", api.MaxGoneIDs+1, code)
	}
}
