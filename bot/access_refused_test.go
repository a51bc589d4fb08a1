package bot

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"dsearch/bot/discordtest"
)

// A thread whose page Discord refuses (403) during a catch-up, because
// the bot lost View Channel on its parent just then, is not given up on:
// once the bot may view the parent again, the thread is caught up, and
// what was written there while the bot was away comes back.
func TestThreadRefusedDuringCatchUpIsAskedAgain(t *testing.T) {
	var d *discordtest.Discord
	var arm atomic.Bool
	var once sync.Once
	ch := fakeGuild().Channels[1] // #general, the thread's parent
	e := setup(t, func(dd *discordtest.Discord) { d = dd }, func(c *Config) {
		c.Transport = hookRT{next: c.Transport, before: func(r *http.Request) {
			if arm.Load() && r.Method == "GET" && strings.HasSuffix(r.URL.Path, fmt.Sprintf("/channels/%d/messages", thread)) {
				once.Do(func() { d.UpdateChannel(hiddenFromBot(ch)) })
			}
		}}
	})
	e.backfilled(int64(len(history())))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	missed := series(thread, t0.Add(300*24*time.Hour), 5, "in the thread while the bot was down")
	e.discord.AddHistory(missed...)
	arm.Store(true)
	e.start()
	waitFor(t, "the thread refused", func() bool { return strings.Contains(e.log.String(), "backfill: channel skipped") })
	waitFor(t, "the bot's state to see the overwrite", func() bool { return !e.bot.botReadsHistory(ch) })
	e.discord.UpdateChannel(ch)
	e.waitStored("what the thread got while the bot was down", missed...)
}

// The bot's own role taken away and given back while its gateway
// connection is down: both GUILD_MEMBER_UPDATEs (sent to the bot whatever
// its intents) come at once with the RESUME. What #staff got meanwhile,
// which the bot could not view, is caught up. The bot checked its access
// with its member as Discord answered for it then (roles back): the role
// was never seen gone, and nothing was caught up. Discord sends no
// THREAD_LIST_SYNC alone for such a change: the member update is what the
// bot acts on.
func TestOwnRoleTakenAndGivenBackIsCaughtUp(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	me, _ := e.discord.Member(botUser) // in the staff role, which views #staff
	without := me
	without.RoleIDs = nil
	e.discord.Offline(true)
	e.discord.UpdateMember(without)
	missed := series(staff, t0.Add(300*24*time.Hour), 120, "in staff while the bot could not view it")
	e.discord.AddHistory(missed...)
	e.discord.UpdateMember(me)
	e.discord.Offline(false)
	e.waitStored("what #staff got while the bot could not view it", missed...)
}
