package bot

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
)

// wholeNow reports whether a live message would move ch's mark now.
func (m *marks) wholeNow(ch discord.ChannelID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.wholeIn[ch]
	return ok && s == m.session
}

// A member fetch that failed once marks every channel unreadable, with a
// gap; a catch-up (here SIGHUP's, likewise a new session's) then makes
// #general whole again. When the bot really loses #general later, the
// first check that can tell gives it a gap again: without one, once
// access came back a live message moved its mark past what was written
// while it was hidden (lost for good).
func TestLossAfterAnUntoldCheckGetsAGap(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	member := fmt.Sprintf("/guilds/%d/members/%d", guildID, botUser)
	ch := fakeGuild().Channels[1] // #general
	calls := len(e.discord.Calls("GET", member))
	e.discord.Fault("GET", member, 502, 5)
	e.discord.UpdateChannel(ch) // any access event; its check cannot tell
	e.discord.WaitCalls("GET", member, calls+5)
	time.Sleep(200 * time.Millisecond)
	e.bot.Backfill() // SIGHUP (or a new gateway session): every channel caught up
	waitFor(t, "the SIGHUP's backfill", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 2 })
	waitFor(t, "#general whole again", func() bool { return e.bot.marks.wholeNow(general) })

	hidden := hiddenFromBot(ch)
	e.discord.UpdateChannel(hidden)
	waitFor(t, "the bot's state to see the overwrite", func() bool { return !e.bot.botReadsHistory(ch) })
	time.Sleep(300 * time.Millisecond)
	if e.bot.marks.wholeNow(general) {
		t.Fatalf("#general, which the bot may no longer view, has no gap: a live message once access is back moves its mark past what is written meanwhile")
	}
}

// The same, end to end: nothing written in #general while the bot could
// not view it is lost. The server's catch-up queued when #general is
// readable again meets a Discord hiccup on #general (five 502s, arikawa's
// retries) and is retried later; meanwhile a live message comes, and the
// gap keeps it from moving the mark past what was missed.
func TestLossAfterAnUntoldCheckLosesNothing(t *testing.T) {
	e := setup(t, func(c *Config) { c.RetryAfter = 2 * time.Second })
	e.backfilled(int64(len(history())))
	member := fmt.Sprintf("/guilds/%d/members/%d", guildID, botUser)
	ch := fakeGuild().Channels[1] // #general
	calls := len(e.discord.Calls("GET", member))
	e.discord.Fault("GET", member, 502, 5)
	e.discord.UpdateChannel(ch)
	e.discord.WaitCalls("GET", member, calls+5)
	time.Sleep(200 * time.Millisecond)
	e.bot.Backfill()
	waitFor(t, "the SIGHUP's backfill", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 2 })

	hidden := hiddenFromBot(ch)
	e.discord.UpdateChannel(hidden)
	waitFor(t, "the bot's state to see the overwrite", func() bool { return !e.bot.botReadsHistory(ch) })
	waitFor(t, "the server's catch-up for the channels 'regained'", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 3 })
	missed := series(general, t0.Add(300*24*time.Hour), 150, "written while the bot could not view general")
	e.discord.AddHistory(missed...)
	pages := fmt.Sprintf("/channels/%d/messages", general)
	before := len(e.discord.Calls("GET", pages))
	e.discord.Fault("GET", pages, 502, 5)
	e.discord.UpdateChannel(ch)
	e.discord.WaitCalls("GET", pages, before+5) // the catch-up of #general failed; retried in 2 s
	live := message(general, user(alice, "alice"), t0.Add(301*24*time.Hour), "live once the bot reads general again")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	time.Sleep(3 * time.Second) // the retry
	e.bot.Backfill()
	waitFor(t, "the last SIGHUP's backfill", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 5 })
	time.Sleep(500 * time.Millisecond)
	if n := e.unstored(missed); n > 0 {
		t.Errorf("%d of %d messages written while the bot could not view #general never stored", n, len(missed))
	}
}
