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

// POST /v1/gone names, of the quoted versions asked about, the messages
// searchd holds edited later (whoever handed it the edit), with the
// stored edit time; one quoted as it is stored, or deleted, is not named
// there.
func TestGoneNamesWhatWasEditedSinceQuoted(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	at := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	msg := func(id api.ID, edited time.Time, text string) api.MessageUpsert {
		m := api.MessageUpsert{ID: id, ChannelID: 81, GuildID: 1, Author: api.Author{ID: 51, Username: "u51"},
			CreatedAt: at.Add(time.Duration(id) * time.Second), Content: text}
		if !edited.IsZero() {
			m.EditedAt = &edited
		}
		return m
	}
	e1, e2 := at.Add(time.Hour), at.Add(2*time.Hour)
	if _, err := f.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{
		msg(8101, time.Time{}, "as first written"), msg(8102, e1, "edited once"), msg(8103, time.Time{}, "never edited"), msg(8104, time.Time{}, "to delete")}}); err != nil {
		t.Fatal(err)
	}
	// Edits another process hands searchd after the answers quoted them.
	if _, err := f.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{
		msg(8101, e1, "edited after the quote"), msg(8102, e2, "edited again")}, Deletes: []api.ID{8104}}); err != nil {
		t.Fatal(err)
	}
	got, err := f.c.Gone(ctx, &api.GoneRequest{Messages: []api.ID{8101, 8102, 8103, 8104}, Quoted: []api.Version{
		{ID: 8101},                // quoted unedited
		{ID: 8102, EditedAt: e1},  // quoted after its first edit
		{ID: 8103},                // still as quoted
		{ID: 8104},                // deleted: gone, not edited
		{ID: 8102, EditedAt: e2}}, // another answer quoted its last version
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []api.Version{{ID: 8101, EditedAt: e1}, {ID: 8102, EditedAt: e2}}
	if !slices.EqualFunc(got.Edited, want, func(a, b api.Version) bool { return a.ID == b.ID && a.EditedAt.Equal(b.EditedAt) }) {
		t.Errorf("edited since quoted: %v, want %v", got.Edited, want)
	}
	if !slices.Equal(got.Messages, []api.ID{8104}) {
		t.Errorf("gone messages: %v, want [8104]", got.Messages)
	}
}
