package bot

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
)

// Audit 13 (trust): a channel deleted while the bot could not hear of it.
// Discord sends no CHANNEL_DELETE of an unavailable guild, and one sent
// while the session was lost is gone with it; the GUILD_CREATE that
// follows just lacks the channel. arikawa's state never drops a channel
// a GUILD_CREATE leaves out, so the guild's catch-up (forgetVanished)
// skips it as still known, its page fetch's 404 only clears its status
// line, and searchd keeps serving its messages: what was deleted is not
// gone.
func TestChannelDeletedUnheardIsForgotten(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delete func(e *env)
	}{
		{"during a guild outage", func(e *env) {
			e.discord.GuildOutage()
			time.Sleep(300 * time.Millisecond)
			e.discord.DeleteChannelUnseen(staff)
			e.discord.GuildBack()
		}},
		{"while the session was lost", func(e *env) {
			e.discord.Offline(true)
			e.discord.RefuseResume()
			e.discord.DeleteChannelUnseen(staff) // its CHANNEL_DELETE went with the session
			e.discord.Offline(false)
			e.discord.WaitSessions(2, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			e.backfilled(int64(len(history())))
			var inStaff []discord.Message
			for _, m := range history() {
				if m.ChannelID == staff {
					inStaff = append(inStaff, m)
				}
			}
			tc.delete(e)
			waitFor(t, "the guild's catch-up", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 2 })
			time.Sleep(2 * time.Second) // a forget is flushed at once
			if n := len(inStaff) - e.unstored(inStaff); n > 0 {
				t.Errorf("%d of %d messages of a channel deleted %s are still stored", n, len(inStaff), tc.name)
			}
			_, edit, _ := e.interaction(alice, 2, query("boiler budget approved"))
			if text := embedText(edit); strings.Contains(text, "/1000/2001/") {
				t.Errorf("an answer after the channel was deleted %s still quotes it: %s", tc.name, text)
			}
		})
	}
}

// Audit 13 (trust): while searchd is down the spool holds what members
// wrote; a message deleted meanwhile keeps its text in the spooled batch
// on disk until searchd is back and takes the deletion, however long
// that is (the rejected/ batches are scrubbed of removals, the waiting
// ones are not). The deletion is spooled beside it, so the text is of
// no use there.
func TestDeletedMessageTextLeavesTheWaitingSpool(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	e.sd.stop()
	m := message(general, user(bob, "bob"), t0.Add(200*24*time.Hour), "my passport number is zq-7731-secret")
	e.discord.Dispatch("MESSAGE_CREATE", m)
	waitFor(t, "the message spooled", func() bool { return e.bot.spool.Len() > 0 })
	e.discord.Dispatch("MESSAGE_DELETE", map[string]any{"id": m.ID, "channel_id": general, "guild_id": guildID})
	waitFor(t, "the deletion spooled", func() bool { return e.bot.spool.Len() > 1 })
	time.Sleep(500 * time.Millisecond)
	var holding []string
	filepath.WalkDir(e.cfg.SpoolDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte("zq-7731-secret")) {
				holding = append(holding, filepath.Base(path))
			}
		}
		return nil
	})
	if len(holding) > 0 {
		t.Errorf("a deleted message's text stays in the spool while searchd is down: %v", holding)
	}
}

// Audit 13 (trust): an age-restricted (NSFW) channel. Discord shows its
// messages only to members who confirmed they are adults, whatever their
// permissions (the channel's "nsfw" flag; age-restricted commands are
// refused outside such channels); the bot reads permissions alone. A
// public answer asked in an ordinary channel counts an age-restricted
// channel every member may read (by permissions) as shared, and quotes it
// to every reader of the ordinary channel, minors included.
func TestPublicAnswerLeavesOutAgeRestrictedChannels(t *testing.T) {
	const lounge = 2050
	at := t0.Add(60 * 24 * time.Hour)
	m := message(lounge, user(bob, "bob"), at, "after midnight the explicit lighthouse photos go up here")
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(discord.Channel{ID: lounge, Type: discord.GuildText, Name: "after-dark", ParentID: category, NSFW: true})
		d.AddHistory(m)
	})
	e.backfilled(int64(len(history()) + 1))
	_, edit, _ := e.interactionIn(general, alice, 2, query("explicit lighthouse photos", public(true)))
	if text := embedText(edit); strings.Contains(text, "/1000/2050/") || strings.Contains(text, "explicit lighthouse") {
		t.Errorf("a public answer in a channel that is not age-restricted quotes an age-restricted one: %s", text)
	}
}
