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
	if n, err := db.ForgetLeftGuild(ctx, guild, segment.DefaultRules); err != nil || n != 2 {
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

// A server the bot left takes what members were called there with it:
// their nicknames there, every name of a member seen nowhere else (not
// listed by /v1/aliases, AuthorNames with no filter, nor matched in a
// question), and the names and topics of the server and its channels. A
// member also seen elsewhere keeps the names not the server's.
func TestLeftGuildTakesItsNames(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	const guild, other, ch, elsewhere, onlyThere, both = 1, 2, 100, 200, 77, 78
	m := msg(1, 0, 0)
	m.ChannelID = ch
	m.Author = searchd.Author{ID: onlyThere, Username: "onlythere", GlobalName: "Only There", Nickname: "secretnick"}
	b := msg(2, time.Minute, 0)
	b.ChannelID = ch
	b.Author = searchd.Author{ID: both, Username: "traveller", Nickname: "leftnick"}
	b2 := msg(3, 2*time.Minute, 0)
	b2.ChannelID = elsewhere
	b2.Author = searchd.Author{ID: both, Username: "traveller"}
	if _, err := db.Apply(ctx, &searchd.Batch{Guilds: []searchd.Guild{{ID: guild, Name: "the left server"}, {ID: other, Name: "home"}},
		Channels: []searchd.Channel{{ID: ch, GuildID: guild, Name: "plans", Kind: "GuildTextChat", Topic: "where we meet on friday"},
			{ID: elsewhere, GuildID: other, Name: "general", Kind: "GuildTextChat"}},
		Messages: []searchd.Message{m, b, b2}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := db.ForgetLeftGuild(ctx, guild, segment.DefaultRules); err != nil || n != 2 {
		t.Fatalf("forget: %d, %v", n, err)
	}
	names, err := db.AuthorNames(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"secretnick", "onlythere", "only there", "leftnick"} {
		if names[n] != nil {
			t.Errorf("after the bot left the server, the name %q known from there is still listed: %v", n, names[n])
		}
	}
	if names["traveller"] == nil {
		t.Errorf("a member seen in another server lost their username: %v", names)
	}
	var nicknames, userNames, guildNames, channelTexts int
	if err := db.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM server_nicknames WHERE guild_id = ?1),
		(SELECT COUNT(*) FROM user_names WHERE user_id = ?2 OR guild_id = ?1),
		(SELECT COUNT(*) FROM guilds WHERE id = ?1 AND name != ''),
		(SELECT COUNT(*) FROM channels WHERE id = ?3 AND (name != '' OR topic != ''))`, guild, onlyThere, ch).
		Scan(&nicknames, &userNames, &guildNames, &channelTexts); err != nil {
		t.Fatal(err)
	}
	if nicknames+userNames+guildNames+channelTexts != 0 {
		t.Errorf("after the bot left the server: %d server nicknames, %d of its names, %d server names, %d channel names or topics kept; want none",
			nicknames, userNames, guildNames, channelTexts)
	}
}

// An import is no sign that the bot was added back to a server it left: an
// export of it (an older one, or one whose import was running when the bot
// was removed) placed the server and let it back in, with its messages,
// names and topics, until the bot was added back. Only the bot's own batch
// placing the server lets it back in.
func TestImportDoesNotBringALeftGuildBack(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	const guild, ch = 1, 100
	in := func(id int64) searchd.Message {
		m := msg(id, time.Duration(id)*time.Minute, 0)
		m.ChannelID = ch
		return m
	}
	place := []searchd.Channel{{ID: ch, GuildID: guild, Name: "zq-channel-name", Kind: "GuildTextChat"}}
	if _, err := db.Apply(ctx, &searchd.Batch{Guilds: []searchd.Guild{{ID: guild, Name: "zq-guild"}}, Channels: place,
		Messages: []searchd.Message{in(1), in(2)}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ForgetLeftGuild(ctx, guild, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	export := &searchd.Batch{Guilds: []searchd.Guild{{ID: guild, Name: "zq-guild"}}, Channels: place,
		Messages: []searchd.Message{in(1), in(2), in(3)}}
	res, err := db.ApplyImport(ctx, []Part{{Batch: export, Checkpoint: &Checkpoint{Path: "/x/general.json", Channel: ch, ExportedAt: 1, Guild: guild}}}, segment.DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	var messages, names int
	if err := db.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM messages), (SELECT COUNT(*) FROM channels WHERE name LIKE 'zq-%') + (SELECT COUNT(*) FROM guilds WHERE name LIKE 'zq-%')`).Scan(&messages, &names); err != nil {
		t.Fatal(err)
	}
	if messages != 0 || names != 0 || res[0].Skipped != 3 {
		t.Errorf("an import of the left guild: %+v; %d messages and %d names stored, want none and 3 skipped", res[0], messages, names)
	}
	// The bot added back: its GUILD_CREATE places the guild, and the same
	// import then stores it.
	if _, err := db.Apply(ctx, &searchd.Batch{Guilds: []searchd.Guild{{ID: guild}}, Channels: place}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if res, err := db.ApplyImport(ctx, []Part{{Batch: export, Checkpoint: &Checkpoint{Path: "/x/general.json", Channel: ch, ExportedAt: 1, Guild: guild}}}, segment.DefaultRules); err != nil || res[0].Inserted != 3 {
		t.Errorf("the import after the bot was added back: %+v, %v; want 3 inserted", res, err)
	}
}
