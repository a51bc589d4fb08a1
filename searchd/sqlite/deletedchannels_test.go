package sqlite

import (
	"context"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// A channel deleted on Discord is forgotten for good: its messages, a
// thread of it searchd never saw, and its row (name, topic) do not come
// back from a later batch (a page fetched before the deletion, an older
// export), and other channels are untouched. A channel forgotten because
// the bot left its server (Forget) takes messages again.
func TestDeletedChannelsStayDeleted(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	const guild, parent, thread, other = 1, 100, 101, 200
	in := func(ch int64, id int64) searchd.Message {
		m := msg(id, time.Duration(id)*time.Minute, 0)
		m.ChannelID = ch
		return m
	}
	places := []searchd.Channel{{ID: parent, GuildID: guild, Name: "secret-plans", Kind: "GuildTextChat", Topic: "the surprise"},
		{ID: other, GuildID: guild, Name: "general", Kind: "GuildTextChat"}}
	if _, err := db.Apply(ctx, &searchd.Batch{Guilds: []searchd.Guild{{ID: guild}}, Channels: places,
		Messages: []searchd.Message{in(parent, 1), in(other, 2)}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := db.ForgetDeletedChannels(ctx, []int64{parent}, segment.DefaultRules); err != nil || n != 1 {
		t.Fatalf("forget: %d, %v", n, err)
	}
	late := &searchd.Batch{Channels: append(places, searchd.Channel{ID: thread, GuildID: guild, ParentID: parent, Kind: "GuildPublicThread", Name: "plans thread"}),
		Messages: []searchd.Message{in(parent, 3), in(thread, 4), in(other, 5)}}
	res, err := db.Apply(ctx, late, segment.DefaultRules, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 2 || res.Inserted != 1 {
		t.Errorf("a page of the deleted channel and its thread after the deletion: %+v, want 2 skipped, 1 inserted", res)
	}
	for _, id := range []int64{1, 3, 4} {
		if _, err := db.Message(ctx, id); err != ErrNotFound {
			t.Errorf("message %d of the deleted channel: %v", id, err)
		}
	}
	if ids, err := db.ChannelsOf(ctx, guild, 0); err != nil || !slices.Equal(ids, []int64{other}) {
		t.Errorf("the guild's channels: %v, %v; want the deleted one's row gone", ids, err)
	}
	// Left, not deleted: the server may add the bot again.
	if _, err := db.Forget(ctx, ForgetFilter{Channel: other}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if res := apply(t, db, in(other, 6)); res.Inserted != 1 {
		t.Errorf("a channel forgotten but not deleted takes new messages: %+v", res)
	}
	checkSegments(t, db)
}
