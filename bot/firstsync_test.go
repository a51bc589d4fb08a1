package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
)

// A member's first /query while the bot is still paging a channel's
// history must not read as if the history had been searched: "Nothing
// relevant was found" (or a few of the newest messages) is misleading
// while older messages are not stored yet. The reply says how many of
// the channels searched are not fully synced, in the member's language;
// a channel whose history is all stored gets no such note.
func TestFirstQueryWhileHistorySyncsSaysSo(t *testing.T) {
	e := setup(t, func(d *discordtest.Discord) {
		// #general's newest page (its catch-up) comes; every page of its
		// history fails, so its first sync never ends in this test.
		d.FaultAfter("GET", fmt.Sprintf("/channels/%d/messages", general), 500, 1, 1<<30)
	})
	waitFor(t, "#general's history to fail", func() bool {
		return strings.Contains(e.log.String(), "backfill: channel failed")
	})

	_, edit, _ := e.interaction(bob, 2, query("small talk number 3 about the weather"))
	if got := embedText(edit); !strings.Contains(got, "not fully synced yet") {
		t.Errorf("first /query while #general's history is still paged: %s\nwant a note that the history is not fully synced", got)
	}
	e.locale = "ko"
	_, edit, _ = e.interaction(bob, 2, query("날씨"))
	if got := embedText(edit); !strings.Contains(got, "아직") {
		t.Errorf("Korean member: %s\nwant the note in Korean", got)
	}
	e.locale = ""
	_, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{{"name": "since", "type": 3, "value": "2025-01-01"}}})
	if got := embedText(edit); !strings.Contains(got, "not fully synced yet") {
		t.Errorf("/catchup in #general while its history is still paged: %s\nwant the note", got)
	}

	// #staff was synced whole: no note.
	_, edit, _ = e.interaction(alice, 2, query("boiler budget", map[string]any{"name": "channel", "type": 7, "value": fmt.Sprint(staff)}))
	if got := embedText(edit); strings.Contains(got, "not fully synced") {
		t.Errorf("/query in a channel synced whole: %s\nwant no note", got)
	}
}

// A history pass that yields to a catch-up (a server queued, the spool
// refusing events) sends back only the channels it had not paged yet;
// those it had paged to their end are synced, and an answer searching
// them must not say their history is still syncing for the rest of the
// run. Driven from syncChannels with a server queued by hand (one the
// bot is not in, and no wake-up, so the queue stays until taken off).
func TestChannelsPagedBeforeAYieldAreNotNotedUnsynced(t *testing.T) {
	const late = 2061
	e := setup(t)
	e.backfilled(int64(len(history())))
	waitFor(t, "the first sync to end", func() bool {
		return e.bot.syncing.count([]api.ID{general, staff, thread}) == 0
	})
	// A channel the bot has not synced: its history has a page left after
	// its catch-up's newest page.
	e.discord.AddChannels(discord.Channel{ID: late, Type: discord.GuildText, Name: "late", ParentID: category})
	for i := range 150 { // more than the newest page (100)
		e.discord.AddHistory(message(late, user(bob, "bob"), t0.Add(time.Duration(i)*time.Minute), fmt.Sprintf("late number %d", i)))
	}
	e.bot.queueMu.Lock()
	e.bot.guildQueue = append(e.bot.guildQueue, 999)
	e.bot.queueMu.Unlock()
	e.bot.syncChannels(context.Background(), []discord.Channel{
		{ID: general, GuildID: guildID, Type: discord.GuildText},
		{ID: late, GuildID: guildID, Type: discord.GuildText},
	}, 0)
	e.bot.queueMu.Lock()
	e.bot.guildQueue = slices.DeleteFunc(e.bot.guildQueue, func(g discord.GuildID) bool { return g == 999 })
	e.bot.queueMu.Unlock()
	if n := e.bot.syncing.count([]api.ID{general}); n != 0 {
		t.Errorf("#general, paged to its end before the pass yielded, still counts as syncing")
	}
	waitFor(t, "#late to be paged once the catch-up is done", func() bool {
		return e.bot.syncing.count([]api.ID{late}) == 0
	})
}
