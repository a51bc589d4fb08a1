package bot

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
)

// TestArchivedThreadsAllBackfilled: every archived thread's messages are
// backfilled, past Discord's pages of 100 threads, ten of them archived in
// the same second across a page's edge (arikawa sent the next page's time
// in whole seconds: five were never listed), and a forum's and a media
// channel's posts, archived or not (a media channel, type 16, was paged
// for messages of its own and its archived posts never listed).
func TestArchivedThreadsAllBackfilled(t *testing.T) {
	const forum, media = 2100, 2200
	base := t0.Add(200*24*time.Hour + 500*time.Millisecond)
	var threads, active []discord.Channel
	var msgs []discord.Message
	post := func(id discord.ChannelID, parent discord.ChannelID, archivedAt time.Time) {
		th := discord.Channel{ID: id, Type: discord.GuildPublicThread, ParentID: parent, Name: fmt.Sprintf("thread %d", id)}
		if archivedAt.IsZero() {
			active = append(active, th)
		} else {
			th.ThreadMetadata = &discord.ThreadMetadata{Archived: true, ArchiveTimestamp: discord.NewTimestamp(archivedAt)}
			threads = append(threads, th)
		}
		at := t0.Add(100*24*time.Hour + time.Duration(len(msgs))*time.Minute)
		msgs = append(msgs, message(id, user(bob, "bob"), at, fmt.Sprintf("post number %d", len(msgs))))
	}
	for k := range 130 {
		archived := base.Add(-time.Duration(k) * time.Second)
		if k >= 95 && k < 105 { // ten in one second, the page's edge (100) among them
			archived = base.Add(-95*time.Second - time.Duration(k-95)*10*time.Millisecond)
		}
		post(discord.ChannelID(50000+k), general, archived)
	}
	for k := range 3 {
		post(discord.ChannelID(51000+k), forum, base.Add(-time.Duration(k)*time.Hour))
		post(discord.ChannelID(52000+k), media, base.Add(-time.Duration(k)*time.Hour))
	}
	post(51100, forum, time.Time{})
	post(52100, media, time.Time{})

	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(discord.Channel{ID: forum, Type: discord.GuildForum, Name: "help", ParentID: category},
			discord.Channel{ID: media, Type: guildMedia, Name: "photos", ParentID: category})
		d.AddChannels(active...)
		d.AddArchived(threads...)
		d.AddHistory(msgs...)
	})
	e.backfilled(int64(len(history()) + len(msgs)))
	for _, m := range msgs {
		if _, err := e.c.Message(context.Background(), api.ID(m.ID), 0, 0); err != nil {
			t.Errorf("thread %d's message: %v", m.ChannelID, err)
		}
	}
	for _, ch := range []string{"/channels/2100/messages", "/channels/2200/messages"} {
		if n := len(e.discord.Calls("GET", ch)); n != 0 {
			t.Errorf("GET %s %d times: a forum or media channel holds no messages of its own", ch, n)
		}
	}
}

// A private thread the bot joined gets messages while the bot is down
// and is archived (by hand, or after 1 hour to 1 week of inactivity)
// before the bot starts again. Discord lists archived private threads
// only on routes of their own (GET
// /channels/{id}/users/@me/threads/archived/private for those the bot
// joined, paged by thread ID): the catch-up lists them, or the thread
// was never caught up, at this start or any later one.
func TestArchivedPrivateThreadIsCaughtUp(t *testing.T) {
	const party = 2020
	first := message(party, user(alice, "alice"), t0.Add(299*24*time.Hour), "the surprise party is on friday")
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(discord.Channel{ID: party, Type: discord.GuildPrivateThread, Name: "party", ParentID: general,
			ThreadMember: &discord.ThreadMember{ID: party, UserID: botUser}})
		d.AddHistory(first)
	})
	e.backfilled(int64(len(history()) + 1))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	missed := series(party, t0.Add(300*24*time.Hour), 5, "in the private thread while the bot was down")
	e.discord.AddHistory(missed...)
	e.discord.ArchiveThread(party, t0.Add(301*24*time.Hour))
	e.restartedAndDone()
	if n := e.unstored(missed); n > 0 {
		t.Errorf("%d of %d messages written in a private thread (the bot a member) while the bot was down, the thread archived since, never stored; GET /users/@me/threads/archived/private calls: %d",
			n, len(missed), len(e.discord.Calls("GET", "/users/@me/threads/archived/private")))
	}
}

// The bot loses View Channel on #staff and gets it back. Meanwhile a
// thread was started there (still active) and another started and
// archived; Discord sent nothing of them (no THREAD_CREATE to a bot that
// cannot view the parent) but the THREAD_LIST_SYNC of the active ones
// when access is back. Once the bot may read #staff again, its threads
// are caught up as well as #staff itself.
func TestThreadsOfChannelReadableAgainAreCaughtUp(t *testing.T) {
	const activeThread, archivedThread = 2030, 2031
	e := setup(t)
	e.backfilled(int64(len(history())))
	ch := fakeGuild().Channels[2] // #staff
	hidden := hiddenFromBot(ch)
	e.discord.UpdateChannel(hidden)
	waitFor(t, "the bot's state to see the overwrite", func() bool { return !e.bot.botReadsHistory(ch) })

	at := t0.Add(300 * 24 * time.Hour)
	inStaff := message(staff, user(alice, "alice"), at, "written in staff while the bot could not view it")
	active := discord.Channel{ID: activeThread, Type: discord.GuildPublicThread, Name: "budget review", ParentID: staff}
	archived := discord.Channel{ID: archivedThread, Type: discord.GuildPublicThread, Name: "old budget", ParentID: staff,
		ThreadMetadata: &discord.ThreadMetadata{Archived: true, ArchiveTimestamp: discord.NewTimestamp(at.Add(2 * time.Hour))}}
	e.discord.AddChannels(active)
	e.discord.AddArchived(archived)
	inActive := series(activeThread, at.Add(time.Minute), 3, "in the active staff thread")
	inArchived := series(archivedThread, at.Add(time.Hour), 3, "in the archived staff thread")
	e.discord.AddHistory(inStaff)
	e.discord.AddHistory(inActive...)
	e.discord.AddHistory(inArchived...)

	e.discord.UpdateChannel(ch)
	active.GuildID = guildID
	e.discord.Dispatch("THREAD_LIST_SYNC", map[string]any{"guild_id": discord.GuildID(guildID),
		"channel_ids": []discord.ChannelID{staff}, "threads": []discord.Channel{active}, "members": []any{}})
	e.waitStored("#staff caught up once readable again", inStaff)
	time.Sleep(2 * time.Second)
	if n := e.unstored(inActive); n > 0 {
		t.Errorf("%d of %d messages of an active thread of #staff, written while the bot could not view #staff, not stored once it can", n, len(inActive))
	}
	if n := e.unstored(inArchived); n > 0 {
		t.Errorf("%d of %d messages of an archived thread of #staff, written while the bot could not view #staff, not stored once it can", n, len(inArchived))
	}
}

// The bot is added to a private thread that already holds messages:
// Discord sends THREAD_CREATE (and THREAD_MEMBERS_UPDATE). The thread's
// history is fetched at once, not when someone next posts there or at
// the next new session (never, if it was archived first).
func TestJoinedPrivateThreadHistoryIsFetched(t *testing.T) {
	const party = 2040
	e := setup(t)
	e.backfilled(int64(len(history())))
	before := series(party, t0.Add(300*24*time.Hour), 5, "said in the private thread before the bot was added")
	e.discord.AddHistory(before...)
	e.discord.CreateChannel(discord.Channel{ID: party, Type: discord.GuildPrivateThread, Name: "party", ParentID: general,
		ThreadMember: &discord.ThreadMember{ID: party, UserID: botUser}})
	time.Sleep(3 * time.Second)
	if n := e.unstored(before); n > 0 {
		t.Errorf("%d of %d messages of a private thread the bot was added to not fetched (3 s after its THREAD_CREATE)", n, len(before))
	}
}

// The bot restarts while Discord hides #general from it: the new
// session's GUILD_CREATE lists #general's stand-in and not its thread
// (threads only of channels the bot may view), so the thread leaves the
// bot's state but must not be forgotten (Discord answers 403 for it, not
// Unknown Channel); once #general is seen again (CHANNEL_UPDATE,
// THREAD_LIST_SYNC), what the thread got meanwhile is caught up, even
// with a live message there first.
func TestThreadOfAHiddenChannelAcrossARestartIsCaughtUp(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	ch := fakeGuild().Channels[1] // #general
	e.discord.UpdateChannel(hiddenFromBot(ch))
	missed := series(thread, t0.Add(300*24*time.Hour), 120, "in the thread while the bot could not view general")
	e.discord.AddHistory(missed...)
	e.start()
	waitFor(t, "the stand-in in the bot's state", func() bool {
		c, err := e.bot.state.Cabinet.Channel(general)
		return err == nil && obfuscated(c)
	})
	waitFor(t, "the guild's catch-up", func() bool { return strings.Contains(e.log.String(), "backfill: guild done") })
	if !e.stored(historyMessage(t, "lighthouse trip on saturday?").ID) {
		t.Fatal("the thread of a channel hidden from the bot was forgotten")
	}
	e.discord.UpdateChannel(ch)
	live := message(thread, user(alice, "alice"), t0.Add(301*24*time.Hour), "live once the bot sees general again")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	e.waitStored("the thread's messages written while hidden", missed...)
}
