package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
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
