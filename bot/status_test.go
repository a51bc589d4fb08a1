package bot

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dsearch/shared/api"
)

// failRT answers the bot's requests for a path holding part with the
// status status holds (none while 0), whatever Discord has.
type failRT struct {
	next   http.RoundTripper
	part   string
	status *atomic.Int32
}

func (f failRT) RoundTrip(r *http.Request) (*http.Response, error) {
	s := int(f.status.Load())
	if s == 0 || !strings.Contains(r.URL.Path, f.part) {
		return f.next.RoundTrip(r)
	}
	return &http.Response{StatusCode: s, Status: http.StatusText(s), Request: r,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(strings.NewReader(`{"message":"` + http.StatusText(s) + `","code":0}`))}, nil
}

// SPOOL/bot-status lists the channels not fully synced by name (what
// dsearch-bot --check and searchd doctor print); a thread's name is what
// members wrote. A thread deleted on Discord leaves the list however the
// bot learns of it: its channel deleted (no event comes for the thread),
// its retry answered 404, or found gone when the server comes back in a
// new session (forgetVanished: its THREAD_DELETE was lost).
func TestStatusForgetsDeletedThreads(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone func(e *env, status *atomic.Int32)
	}{
		{"its channel deleted", func(e *env, _ *atomic.Int32) { e.discord.DeleteChannel(general) }},
		{"its retry answered 404", func(e *env, status *atomic.Int32) {
			status.Store(http.StatusNotFound) // deleted, and no THREAD_DELETE came
		}},
		{"found gone in a new session", func(e *env, _ *atomic.Int32) {
			e.discord.Offline(true)
			e.discord.RefuseResume() // the THREAD_DELETE dispatched meanwhile is lost
			e.discord.DeleteChannel(thread)
			e.discord.Offline(false)
			e.discord.WaitSessions(2, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var status atomic.Int32
			status.Store(http.StatusInternalServerError) // the thread "trip plans" cannot be synced
			retry := 200 * time.Millisecond
			if tc.name != "its retry answered 404" {
				retry = time.Hour // no retry's 404 to clear it
			}
			e := setup(t, func(c *Config) {
				c.Transport, c.RetryAfter = failRT{next: c.Transport, part: "/channels/2002/messages", status: &status}, retry
			})
			listed := func() bool {
				st, _ := api.ReadBotStatus(e.cfg.SpoolDir)
				return st != nil && len(st.Incomplete) == 1 && st.Incomplete[0].Channel == thread
			}
			waitFor(t, "the thread reported incomplete", listed)
			e.waitStored("#general", history()[0])
			tc.gone(e, &status)
			waitFor(t, "the deleted thread out of the status file", func() bool { return !listed() })
		})
	}
}

// A channel whose catch-up waits (the spool full while searchd is away)
// and that Discord hides from the bot meanwhile is caught up from its
// stand-in (discord-api-docs, Obfuscated Channels): Discord answers 403,
// and the status file, which dsearch-bot --check prints, must not name
// the channel "___hidden___" but by the name members know.
func TestStatusNeverNamesAChannelByItsStandIn(t *testing.T) {
	e := setup(t, func(c *Config) { c.SpoolMax = 4000 })
	e.backfilled(int64(len(history())))
	// The start's backfill done: one still running when searchd stops
	// holds the backfill loop until searchd is back, and the thread's
	// catch-up then runs once #staff is hidden, which it skips.
	waitFor(t, "the start's backfill", func() bool { return strings.Contains(e.log.String(), "backfill: guild done") })
	e.sd.stop()
	lost := series(thread, t0.Add(300*24*time.Hour), 150, "while searchd was away")
	for _, m := range lost {
		e.discord.Post(m)
		time.Sleep(time.Millisecond)
	}
	waitFor(t, "the overflow", func() bool { return strings.Contains(e.log.String(), "spool full") })
	// The thread's catch-up waits for searchd; #staff's, refused too,
	// waits behind it.
	refused := series(staff, t0.Add(301*24*time.Hour), 150, "refused by the full spool")
	for _, m := range refused {
		e.discord.Post(m)
		time.Sleep(time.Millisecond)
	}
	waitFor(t, "#staff lost", func() bool {
		e.bot.lostMu.Lock()
		defer e.bot.lostMu.Unlock()
		_, ok := e.bot.lost[staff]
		return ok
	})
	e.discord.UpdateChannel(hiddenFromBot(fakeGuild().Channels[2]))
	waitFor(t, "the stand-in in the bot's state", func() bool {
		c, err := e.bot.state.Cabinet.Channel(staff)
		return err == nil && obfuscated(c)
	})
	e.sd.start()
	e.waitStored("the thread's refused messages", lost...)
	waitFor(t, "#staff's catch-up, after the thread's", func() bool { return strings.Count(e.log.String(), "catching up channels") >= 2 })
	time.Sleep(300 * time.Millisecond) // its status written
	var got *api.IncompleteChannel
	st, err := api.ReadBotStatus(e.cfg.SpoolDir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range st.Incomplete {
		if st.Incomplete[i].Channel == api.ID(staff) {
			got = &st.Incomplete[i]
		}
	}
	if got != nil && got.Name != "staff" {
		t.Errorf("the status file names #staff %q", got.Name)
	}
	// Seen again: what the spool refused is caught up.
	e.discord.UpdateChannel(fakeGuild().Channels[2])
	e.waitStored("#staff's refused messages", refused...)
}
