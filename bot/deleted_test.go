package bot

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dsearch/bot/discordtest"
)

// failChannelGet fails the bot's Get Channel requests for one channel
// with a network error while fail is set.
type failChannelGet struct {
	next http.RoundTripper
	path string
	fail *atomic.Bool
}

func (f failChannelGet) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.fail.Load() && r.Method == "GET" && strings.HasSuffix(r.URL.Path, f.path) {
		return nil, errors.New("connection reset by peer")
	}
	return f.next.RoundTrip(r)
}

// A channel Discord announces deleted (CHANNEL_DELETE) is forgotten once
// Discord confirms it (404 Unknown Channel), with its thread; while
// Discord cannot be asked, nothing is forgotten on doubt.
func TestDeletedChannelForgottenOnceConfirmed(t *testing.T) {
	var fail atomic.Bool
	e := setup(t, func(d *discordtest.Discord) { d.DeleteOnAccessLoss(true) }, func(c *Config) {
		c.Transport = failChannelGet{next: c.Transport, path: fmt.Sprintf("/channels/%d", general), fail: &fail}
	})
	h := history()
	e.backfilled(int64(len(h)))
	fail.Store(true)
	e.discord.DeleteChannel(general)
	waitFor(t, "a second failed question about #general", func() bool {
		return strings.Count(e.log.String(), "cannot ask Discord whether a channel was deleted") >= 2
	})
	for _, m := range h {
		if m.ChannelID == general && !e.stored(m.ID) {
			t.Fatalf("message %d of #general forgotten before Discord confirmed the deletion", m.ID)
		}
	}
	fail.Store(false)
	waitFor(t, "#general and its thread forgotten", func() bool {
		for _, m := range h {
			if (m.ChannelID == general || m.ChannelID == thread) && e.stored(m.ID) {
				return false
			}
		}
		return true
	})
	if _, ok := e.bot.marks.mark(general); ok {
		t.Error("the deleted channel's sync mark stayed")
	}
}

// The bot loses View Channel on #general and Discord tells it as if the
// channel and its thread were deleted (CHANNEL_DELETE, THREAD_DELETE),
// then gives it back as if new (CHANNEL_CREATE, THREAD_LIST_SYNC). Taken
// at its word, the deletion forgot #general's history for good, and
// nothing caught up what was written while the bot could not view it.
func TestChannelDeleteForAccessLossForgetsNothing(t *testing.T) {
	e := setup(t, func(d *discordtest.Discord) { d.DeleteOnAccessLoss(true) })
	h := history()
	e.backfilled(int64(len(h)))
	ch := fakeGuild().Channels[1] // #general
	e.discord.UpdateChannel(hiddenFromBot(ch))
	waitFor(t, "the state without #general", func() bool {
		_, err := e.bot.state.Cabinet.Channel(general)
		return err != nil
	})
	// Either the bot took the deletion at its word (searchd forgot
	// #general) or Discord told it both exist but are hidden.
	waitFor(t, "the deletions handled", func() bool {
		return !e.stored(h[0].ID) || strings.Count(e.log.String(), "may no longer view was announced deleted") >= 2
	})
	missed := series(general, t0.Add(300*24*time.Hour), 150, "written while the bot could not view general")
	missedThread := series(thread, t0.Add(301*24*time.Hour), 3, "in the thread while the bot could not view general")
	e.discord.AddHistory(append(missed, missedThread...)...)
	e.discord.UpdateChannel(ch)
	waitFor(t, "the catch-up once the bot views #general again", func() bool {
		return strings.Count(e.log.String(), "backfill: guild done") >= 2
	})
	time.Sleep(300 * time.Millisecond) // what the catch-up posted through the spool
	lost := 0
	for _, m := range h {
		if (m.ChannelID == general || m.ChannelID == thread) && !e.stored(m.ID) {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d messages of #general and its thread forgotten because the bot lost View Channel", lost)
	}
	if n := e.unstored(append(missed, missedThread...)); n > 0 {
		t.Errorf("%d of %d messages written while the bot could not view #general never stored", n, len(missed)+len(missedThread))
	}
}

// The same, both changes replayed at once at a RESUME: when the bot asks
// about the deletion, Discord shows the channel again, and the bot, which
// missed what was written while it was hidden, catches it up.
func TestChannelDeleteForAccessLossReplayedAtOnceForgetsNothing(t *testing.T) {
	e := setup(t, func(d *discordtest.Discord) { d.DeleteOnAccessLoss(true) })
	h := history()
	e.backfilled(int64(len(h)))
	ch := fakeGuild().Channels[1] // #general
	e.discord.Offline(true)
	e.discord.UpdateChannel(hiddenFromBot(ch))
	missed := series(general, t0.Add(300*24*time.Hour), 150, "written while the bot could not view general")
	e.discord.AddHistory(missed...)
	e.discord.UpdateChannel(ch)
	e.discord.Offline(false)
	e.waitStored("what #general got while the bot could not view it", missed...)
	if n := e.unstored(h); n > 0 {
		t.Errorf("%d messages of the history forgotten because the bot lost View Channel for a moment", n)
	}
}
