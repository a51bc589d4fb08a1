package bot

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
)

// The bot is removed from a private thread it had synced (Discord then
// sends it nothing of the thread) and added back later (THREAD_CREATE).
// The thread has a mark: it gets a gap and is caught up from it, or the
// first live message moved the mark past what was written meanwhile (50
// of 150 lost for good, even after SIGHUP).
func TestPrivateThreadRejoinedIsCaughtUp(t *testing.T) {
	const party = 2060
	first := message(party, user(alice, "alice"), t0.Add(299*24*time.Hour), "the surprise party is on friday")
	th := discord.Channel{ID: party, Type: discord.GuildPrivateThread, Name: "party", ParentID: general,
		ThreadMember: &discord.ThreadMember{ID: party, UserID: botUser}}
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(th)
		d.AddHistory(first)
	})
	e.backfilled(int64(len(history()) + 1))
	waitFor(t, "the thread whole", func() bool { return e.bot.marks.wholeNow(party) })
	// Removed from the thread: Discord tells the bot so, then sends nothing.
	e.discord.Dispatch("THREAD_MEMBERS_UPDATE", map[string]any{"id": discord.ChannelID(party), "guild_id": discord.GuildID(guildID),
		"member_count": 1, "removed_member_ids": []discord.UserID{botUser}})
	missed := series(party, t0.Add(300*24*time.Hour), 150, "in the private thread while the bot was not a member")
	e.discord.AddHistory(missed...)
	// Added back: THREAD_CREATE, as Discord sends when the bot is added to a thread.
	back := th
	back.GuildID = guildID
	e.discord.Dispatch("THREAD_CREATE", back)
	time.Sleep(2 * time.Second)
	live := message(party, user(alice, "alice"), t0.Add(301*24*time.Hour), "live once the bot is back in the thread")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	time.Sleep(1500 * time.Millisecond)
	e.bot.Backfill() // SIGHUP: the documented remedy
	waitFor(t, "the SIGHUP's backfill", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 2 })
	time.Sleep(500 * time.Millisecond)
	if n := e.unstored(missed); n > 0 {
		t.Errorf("%d of %d messages written in a private thread while the bot was out of it never stored (added back, the thread kept its mark and stayed whole)", n, len(missed))
	}
}

// A guild outage (GUILD_DELETE unavailable, same session): an active
// thread gets 150 messages and is archived meanwhile. The GUILD_CREATE
// that ends the outage lists active threads only; every channel and
// thread of the guild gets a gap at the outage's start, so a live message
// (the thread unarchived by a post) before its catch-up moves no mark past
// what was missed.
func TestThreadArchivedDuringGuildOutageIsCaughtUp(t *testing.T) {
	const topic = 2070
	th := discord.Channel{ID: topic, Type: discord.GuildPublicThread, Name: "topic", ParentID: general}
	first := message(topic, user(alice, "alice"), t0.Add(299*24*time.Hour), "first in the thread")
	e := setup(t, func(c *Config) { c.RetryAfter = 2 * time.Second }, func(d *discordtest.Discord) {
		d.AddChannels(th)
		d.AddHistory(first)
	})
	e.backfilled(int64(len(history()) + 1))
	waitFor(t, "the thread whole", func() bool { return e.bot.marks.wholeNow(topic) })
	e.discord.GuildOutage()
	time.Sleep(300 * time.Millisecond)
	missed := series(topic, t0.Add(300*24*time.Hour), 150, "in the thread during the guild outage")
	e.discord.AddHistory(missed...)
	e.discord.ArchiveThread(topic, t0.Add(300*24*time.Hour+time.Hour))
	pages := fmt.Sprintf("/channels/%d/messages", topic)
	before := len(e.discord.Calls("GET", pages))
	e.discord.Fault("GET", pages, 502, 5)
	e.discord.GuildBack()
	e.discord.WaitCalls("GET", pages, before+5) // the thread's catch-up failed; retried in 2 s
	live := message(topic, user(alice, "alice"), t0.Add(301*24*time.Hour), "live: the thread unarchived by a post")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	time.Sleep(4 * time.Second) // the retry
	e.bot.Backfill()
	waitFor(t, "the SIGHUP's backfill", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 3 })
	time.Sleep(500 * time.Millisecond)
	if n := e.unstored(missed); n > 0 {
		t.Errorf("%d of %d messages written in a thread archived during a guild outage never stored", n, len(missed))
	}
}

// The bot restarts; what was written while it was down waits for the
// server's catch-up. Discord fails the bot's member a few times (5xx,
// arikawa's five tries) as the GUILD_CREATE comes, so the catch-up cannot
// list the channels: it is queued again after a pause (it returned, and
// nothing tried again in this session).
func TestCatchUpRetriedWhenMemberFetchFails(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	missed := series(general, t0.Add(300*24*time.Hour), 5, "written while the bot was down")
	e.discord.AddHistory(missed...)
	member := fmt.Sprintf("/guilds/%d/members/%d", guildID, botUser)
	calls := len(e.discord.Calls("GET", member))
	e.discord.Fault("GET", member, 502, 10)
	e.start()
	e.discord.WaitCalls("GET", member, calls+10)
	time.Sleep(8 * time.Second) // Discord answers again; any retry would have run
	if n := e.unstored(missed); n > 0 {
		t.Errorf("%d of %d messages written while the bot was down not fetched 8 s after the start (the server's catch-up was dropped when one member fetch failed; log has 'cannot list channels': %v)",
			n, len(missed), strings.Contains(e.log.String(), "cannot list channels"))
	}
}
