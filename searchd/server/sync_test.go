package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"dsearch/shared/api"
)

// snowflake is a Discord ID created at t.
func snowflake(t time.Time, n int) api.ID {
	return api.ID((t.UnixMilli()-1420070400000)<<22 | int64(n))
}

// The bot's reconciliation asks for a channel's stored IDs in a span, and
// forgets deleted channels (with their threads) and guilds.
func TestMessageIDsAndForgottenPlaces(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	at := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	const guild, other, general, thread, staff, elsewhere, category = 1, 2, 10, 11, 12, 20, 9
	var msgs []api.MessageUpsert
	ids := map[api.ID][]api.ID{}
	for i, ch := range []api.ID{general, general, general, thread, staff, elsewhere} {
		created := at.Add(time.Duration(i) * time.Hour)
		id := snowflake(created, i)
		g := api.ID(guild)
		if ch == elsewhere {
			g = other
		}
		msgs = append(msgs, api.MessageUpsert{ID: id, ChannelID: ch, GuildID: g, Author: api.Author{ID: 5, Username: "u"},
			CreatedAt: created, Content: fmt.Sprint("message ", i)})
		ids[ch] = append(ids[ch], id)
	}
	batch := &api.MessageBatch{Channels: []api.Channel{
		{ID: category, GuildID: guild, Name: "text", Kind: "GuildCategory"},
		{ID: general, GuildID: guild, ParentID: category, Name: "general", Kind: "GuildTextChat"},
		{ID: thread, GuildID: guild, ParentID: general, Name: "t", Kind: "GuildPublicThread"},
		{ID: staff, GuildID: guild, ParentID: category, Name: "staff", Kind: "GuildTextChat"},
	}, Messages: msgs}
	if _, err := f.c.PostMessages(ctx, batch); err != nil {
		t.Fatal(err)
	}
	g := ids[general]
	got, err := f.c.MessageIDs(ctx, general, g[1], g[2])
	if err != nil || fmt.Sprint(got.IDs) != fmt.Sprint(g[1:]) || got.More {
		t.Errorf("message-ids %s..%s: %+v, %v; want %v", g[1], g[2], got, err, g[1:])
	}
	if got, err := f.c.MessageIDs(ctx, general, 1, g[0]-1); err != nil || len(got.IDs) != 0 {
		t.Errorf("message-ids before the first: %+v, %v", got, err)
	}
	chans, err := f.c.GuildChannels(ctx, guild)
	if err != nil || len(chans.Channels) != 4 {
		t.Errorf("guild channels: %+v, %v", chans, err)
	}
	// A deleted category leaves its channels (Discord keeps them).
	if res, err := f.c.PostMessages(ctx, &api.MessageBatch{ForgetChannels: []api.ID{category}}); err != nil || res.Deleted != 0 {
		t.Fatalf("forget a category: %+v, %v", res, err)
	}

	res, err := f.c.PostMessages(ctx, &api.MessageBatch{ForgetChannels: []api.ID{general}})
	if err != nil || res.Deleted != 4 {
		t.Fatalf("forget #general: %+v, %v (want its 3 messages and its thread's)", res, err)
	}
	for _, id := range append(ids[general], ids[thread]...) {
		if _, err := f.c.Message(ctx, id, 0, 0); err == nil {
			t.Errorf("message %s of a forgotten channel is still served", id)
		}
	}
	if _, err := f.c.Message(ctx, ids[staff][0], 0, 0); err != nil {
		t.Errorf("another channel's message was forgotten: %v", err)
	}
	// A forgotten message stays a tombstone: a late page does not bring it back.
	if res, err := f.c.PostMessages(ctx, &api.MessageBatch{Messages: msgs[:1]}); err != nil || res.Skipped != 1 {
		t.Errorf("a forgotten message sent again: %+v, %v", res, err)
	}
	if res, err := f.c.PostMessages(ctx, &api.MessageBatch{ForgetGuilds: []api.ID{guild}}); err != nil || res.Deleted != 1 {
		t.Errorf("forget the guild: %+v, %v", res, err)
	}
	if _, err := f.c.Message(ctx, ids[elsewhere][0], 0, 0); err != nil {
		t.Errorf("another guild's message was forgotten: %v", err)
	}
}
