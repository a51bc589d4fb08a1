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
