package sqlite

import (
	"context"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// A guild the bot left is forgotten without tombstones or checkpoints,
// kept out of later batches (a page in flight), and let back in by a
// batch that places it again (the bot added back).
func TestLeftGuildComesBackWhenPlaced(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	const guild, ch = 1, 100
	in := func(id int64) searchd.Message {
		m := msg(id, time.Duration(id)*time.Minute, 0)
		m.ChannelID = ch
		return m
	}
	place := []searchd.Channel{{ID: ch, GuildID: guild, Name: "general", Kind: "GuildTextChat"}}
	if _, err := db.Apply(ctx, &searchd.Batch{Guilds: []searchd.Guild{{ID: guild}}, Channels: place,
		Messages: []searchd.Message{in(1), in(2)}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.SetBackfill(ctx, &Backfill{ChannelID: ch, Complete: true}); err != nil {
		t.Fatal(err)
	}
	if n, err := db.ForgetLeftGuild(ctx, guild, []int64{ch}, segment.DefaultRules); err != nil || n != 2 {
		t.Fatalf("forget: %d, %v", n, err)
	}
	var tombstones, checkpoints int
	if err := db.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM tombstones), (SELECT COUNT(*) FROM backfill)`).Scan(&tombstones, &checkpoints); err != nil {
		t.Fatal(err)
	}
	if tombstones != 0 || checkpoints != 0 {
		t.Errorf("after the guild was left: %d tombstones, %d checkpoints; want none", tombstones, checkpoints)
	}
	// A page in flight: its channel placeholder names the guild.
	late := &searchd.Batch{Channels: []searchd.Channel{{ID: ch, GuildID: guild}}, Messages: []searchd.Message{in(1), in(3)}}
	if res, err := db.Apply(ctx, late, segment.DefaultRules, nil); err != nil || res.Skipped != 2 || res.Inserted != 0 {
		t.Errorf("a page of the left guild: %+v, %v; want 2 skipped", res, err)
	}
	// The bot added back: its GUILD_CREATE places the guild, then pages.
	if _, err := db.Apply(ctx, &searchd.Batch{Guilds: []searchd.Guild{{ID: guild}}, Channels: place}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if res, err := db.Apply(ctx, late, segment.DefaultRules, nil); err != nil || res.Inserted != 2 {
		t.Errorf("a page after the guild was placed again: %+v, %v; want 2 inserted (1 comes back)", res, err)
	}
}
