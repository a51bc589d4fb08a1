package bot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/bot/spool"
	"dsearch/shared/api"
)

// The bot loses View Channel on #general while it runs (a moderator's
// overwrite) and gets it back. Discord sends no MESSAGE_CREATE for a
// channel the bot cannot view, so what was written meanwhile must be
// fetched once the channel is readable again. The documented remedy for
// a permission fixed is SIGHUP. A live message after the permission came
// back moves #general's mark past the gap (the channel stayed "whole"),
// so neither the CHANNEL_UPDATE nor the SIGHUP catch-up fetches it.
func TestAccessRegainedIsCaughtUp(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	ch := fakeGuild().Channels[1] // #general
	hidden := hiddenFromBot(ch)
	e.discord.UpdateChannel(hidden)
	waitFor(t, "the bot's state to see the overwrite", func() bool { return !e.bot.botReadsHistory(ch) })
	// Written while the bot may not view #general: Discord dispatches
	// nothing of it to the bot. More than the page before the mark.
	missed := series(general, t0.Add(300*24*time.Hour), 150, "written while the bot could not view general")
	e.discord.AddHistory(missed...)
	e.discord.UpdateChannel(ch)
	waitFor(t, "the bot's state to see the permission back", func() bool { return e.bot.botReadsHistory(ch) })
	live := message(general, user(alice, "alice"), t0.Add(301*24*time.Hour), "live once the bot reads general again")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	e.bot.Backfill() // SIGHUP, as docs/bot.md says after fixing a permission
	waitFor(t, "the SIGHUP's backfill", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 2 })
	time.Sleep(300 * time.Millisecond)
	n := 0
	for _, m := range missed {
		if !e.stored(m.ID) {
			n++
		}
	}
	if n > 0 {
		t.Errorf("%d of %d messages written while the bot could not view #general are never stored", n, len(missed))
	}
}

// Read Message History taken from the bot on #general while a page of it
// is requested, before the bot's gateway state has the CHANNEL_UPDATE
// (here the gateway connection dropped a moment earlier, so the event
// waits for the RESUME; without a drop the window is the event's
// latency). Discord answers the empty page it gives a bot without the
// permission; botReadsHistory, asked after the page came, still says
// the bot reads history, so the empty page is reconciled and every
// stored message of #general up to the mark is deleted, tombstones
// included: none of it comes back once the permission is restored.
func TestPermissionRacingAPageDeletesNothing(t *testing.T) {
	var d *discordtest.Discord
	var once sync.Once
	var arm bool
	var mu sync.Mutex
	ch := fakeGuild().Channels[1] // #general
	noHistory := ch
	noHistory.Overwrites = []discord.Overwrite{{ID: discord.Snowflake(guildID), Type: discord.OverwriteRole, Deny: discord.PermissionReadMessageHistory}}
	e := setup(t, func(dd *discordtest.Discord) { d = dd }, func(c *Config) {
		c.Transport = hookRT{next: c.Transport, before: func(r *http.Request) {
			mu.Lock()
			a := arm
			mu.Unlock()
			if a && r.Method == "GET" && strings.HasSuffix(r.URL.Path, fmt.Sprintf("/channels/%d/messages", general)) {
				once.Do(func() {
					d.Offline(true) // the gateway drops; events wait for the RESUME
					d.UpdateChannel(noHistory)
				})
			}
		}}
	})
	h := history()
	e.backfilled(int64(len(h)))
	mu.Lock()
	arm = true
	mu.Unlock()
	e.bot.Backfill() // SIGHUP: every channel caught up
	time.Sleep(time.Second)
	d.Offline(false)
	waitFor(t, "the bot's state to see the overwrite", func() bool { return !e.bot.botReadsHistory(ch) })
	lost := 0
	for _, m := range h {
		if m.ChannelID == general && !e.stored(m.ID) {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d messages of #general deleted (tombstoned) for an empty page served without Read Message History", lost)
	}
	e.discord.UpdateChannel(ch)
	waitFor(t, "the permission back", func() bool { return e.bot.botReadsHistory(ch) })
	e.bot.Backfill()
	time.Sleep(time.Second)
	if !e.stored(h[0].ID) {
		t.Errorf("after the permission came back and a SIGHUP, #general's history is still gone")
	}
}

// TestPermissionBackBeforeTheCheckDeletesNothing: as above, but the
// permission comes back between the empty page and the bot's check, and
// the one message it asked about (the span's newest) really was deleted
// meanwhile. Asking about that one alone, the bot took the page at its
// word and deleted, for good, every stored message of #general.
func TestPermissionBackBeforeTheCheckDeletesNothing(t *testing.T) {
	var d *discordtest.Discord
	var once sync.Once
	var arm bool
	var mu sync.Mutex
	ch := fakeGuild().Channels[1] // #general
	noHistory := ch
	noHistory.Overwrites = []discord.Overwrite{{ID: discord.Snowflake(guildID), Type: discord.OverwriteRole, Deny: discord.PermissionReadMessageHistory}}
	h := history()
	var newest discord.MessageID
	for _, m := range h {
		if m.ChannelID == general {
			newest = max(newest, m.ID)
		}
	}
	page := func(r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		return arm && r.Method == "GET" && strings.HasSuffix(r.URL.Path, fmt.Sprintf("/channels/%d/messages", general))
	}
	e := setup(t, func(dd *discordtest.Discord) { d = dd }, func(c *Config) {
		c.Transport = hookRT{next: c.Transport,
			before: func(r *http.Request) {
				if page(r) {
					once.Do(func() {
						d.Offline(true) // the gateway drops; events wait for the RESUME
						d.UpdateChannel(noHistory)
					})
				}
			},
			after: func(r *http.Request) {
				if page(r) {
					mu.Lock()
					arm = false
					mu.Unlock()
					d.UpdateChannel(ch)       // the permission back before the check
					d.Remove(general, newest) // and the span's newest message deleted
				}
			}}
	})
	e.backfilled(int64(len(h)))
	mu.Lock()
	arm = true
	mu.Unlock()
	e.bot.Backfill() // SIGHUP: every channel caught up
	time.Sleep(time.Second)
	d.Offline(false)
	lost := 0
	for _, m := range h {
		if m.ChannelID == general && m.ID != newest && !e.stored(m.ID) {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d messages of #general deleted (tombstoned) for an empty page served without Read Message History", lost)
	}
}

// The bot's own messages are never stored live ("our own answers would
// echo other messages into the index", events.go), but a history page
// (backfill, catch-up, --reconcile) stores them: a public /query answer
// (an embed: the question as title, the LLM's answer, built from other
// messages' text, as description) is stored as "🔗 question — answer"
// lines and found by search, even after the messages it quoted were
// deleted or their author opted out.
func TestOwnAnswersNotStoredByPages(t *testing.T) {
	answer := message(general, discord.User{ID: botUser, Username: "dsearch", Bot: true}, t0.Add(45*24*time.Hour), "")
	answer.Type = discord.ChatInputCommandMessage
	answer.Embeds = []discord.Embed{{Title: "who broke the boiler?",
		Description: "Bob said the zeppelin valve broke the boiler [1]."}}
	e := setup(t, func(d *discordtest.Discord) { d.AddHistory(answer) })
	waitFor(t, "#general's history", func() bool {
		cp, err := e.c.Backfill(context.Background(), general)
		return err == nil && cp.Complete
	})
	e.backfilled(int64(len(history())))
	if e.stored(answer.ID) {
		t.Errorf("the bot's own public answer was stored by the backfill: %q", e.content(answer.ID))
	}
	// Answers stored by an earlier version, or brought by an export, are
	// kept out by the bot's own opt-out.
	waitFor(t, "the bot opted out", func() bool {
		st, err := e.c.OptOutStatus(context.Background(), api.ID(botUser))
		return err == nil && st.OptedOut
	})
	if r, err := e.c.Search(context.Background(), map[string][]string{"q": {"zeppelin"}, "mode": {"lexical"}}); err == nil && len(r.Results) > 0 {
		t.Errorf("search finds the text of the bot's own answer: %d results", len(r.Results))
	}
}

// One flush cut into parts (over api.MaxBatchItems items: edits kept
// from earlier refusals, a guild's thousands of threads placed) where the
// spool refuses an earlier part (full: the earlier part is the larger)
// and takes a later one: the later part's messages move their channel's
// mark (marks.spooled, in the loop) before the refused part's channels
// get their gap (b.lost, after the loop), so the mark runs ahead of
// messages neither the spool nor searchd holds. The catch-up then starts
// after them; only those within the 100 messages before the mark come
// back.
func TestMarkNeverPassesRefusedMessages(t *testing.T) {
	const ch, g = discord.ChannelID(2000), discord.GuildID(1000)
	mk := &marks{through: map[discord.ChannelID]discord.MessageID{ch: 1}, wholeIn: map[discord.ChannelID]uint64{ch: 1},
		gaps: map[discord.ChannelID]uint64{}, asked: map[discord.ChannelID]bool{}, session: 1}
	calls := 0
	b := &batcher{log: slog.New(slog.NewTextHandler(io.Discard, nil)), maxItems: 1 << 20, marks: mk,
		put: func(*api.MessageBatch) error {
			calls++
			if calls == 1 {
				return spool.ErrFull
			}
			return nil
		},
		lost: func(map[discord.ChannelID]discord.GuildID, int, error) {}}
	for i := range 1100 {
		at := t0.Add(time.Duration(i) * time.Second)
		b.message(api.MessageUpsert{ID: api.ID(discord.NewSnowflake(at)), GuildID: api.ID(g), ChannelID: api.ID(ch),
			Author: api.Author{ID: 1, Username: "a"}, CreatedAt: at, Content: fmt.Sprint("m", i)})
	}
	b.flush()
	firstRefused := discord.MessageID(discord.NewSnowflake(t0))
	if mark, _ := mk.mark(ch); mark >= firstRefused {
		t.Errorf("the mark moved to %d, past the %d messages the spool refused (from %d)", mark, 1000, firstRefused)
	}
}

// A --reconcile run while a server is unavailable (a Discord outage:
// READY lists it unavailable and its GUILD_CREATE does not come within
// waitGuilds' minute) skips that server without a word: it reports
// success, exits 0 and removes its progress file, so the operator
// believes every deletion made while the bot was away was found.
func TestReconcileDuringGuildOutageSaysSo(t *testing.T) {
	defer func(w time.Duration) { guildWait = w }(guildWait)
	guildWait = 2 * time.Second
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.discord.Remove(general, h[10].ID) // deleted while the bot was away, far back
	e.discord.OutageAtIdentify(true)
	var out strings.Builder
	err := Reconcile(context.Background(), e.cfg, &out)
	t.Logf("reconcile: err=%v\n%s", err, &out)
	if err == nil && e.stored(h[10].ID) {
		t.Errorf("--reconcile succeeded, yet the server it could not see keeps a message deleted on Discord")
	}
	if !strings.Contains(out.String(), "unavailable on Discord") {
		t.Errorf("--reconcile did not name the server it could not see:\n%s", &out)
	}
}

// The bot loses View Channel on #general while Discord fails the one
// request recheckAccess makes (without the Server Members intent,
// arikawa's State.Member asks GET /guilds/{g}/members/{bot} each time and
// gives up after five 5xx). The state cannot tell what the bot may read,
// so every channel of the guild gets a gap and counts as unreadable until
// a check can tell: when the permission comes back, #general is caught
// up. Before, nothing was noted, and the next live message moved the
// mark past what was written meanwhile (51 of 150 lost for good).
func TestAccessLostWhileMemberFetchFailsIsCaughtUp(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	member := fmt.Sprintf("/guilds/%d/members/%d", guildID, botUser)
	ch := fakeGuild().Channels[1] // #general
	hidden := hiddenFromBot(ch)
	calls := len(e.discord.Calls("GET", member))
	e.discord.Fault("GET", member, 502, 5)
	e.discord.UpdateChannel(hidden)
	e.discord.WaitCalls("GET", member, calls+5) // recheckAccess's, all failed
	time.Sleep(200 * time.Millisecond)
	missed := series(general, t0.Add(300*24*time.Hour), 150, "written while the bot could not view general")
	e.discord.AddHistory(missed...)
	e.discord.UpdateChannel(ch)
	waitFor(t, "the bot's state to see the permission back", func() bool { return e.bot.botReadsHistory(ch) })
	live := message(general, user(alice, "alice"), t0.Add(301*24*time.Hour), "live once the bot reads general again")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	e.bot.Backfill() // SIGHUP, as docs/bot.md says after fixing a permission
	waitFor(t, "the SIGHUP's backfill", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 2 })
	time.Sleep(500 * time.Millisecond)
	if n := e.unstored(missed); n > 0 {
		t.Errorf("%d of %d messages written while the bot could not view #general never stored (its access change was missed for one failed member request)", n, len(missed))
	}
}

// hiddenFromBot is ch with an overwrite denying the bot View Channel.
func hiddenFromBot(ch discord.Channel) discord.Channel {
	ch.Overwrites = append(slices.Clone(ch.Overwrites),
		discord.Overwrite{ID: discord.Snowflake(botUser), Type: discord.OverwriteMember, Deny: discord.PermissionViewChannel})
	return ch
}
