package bot

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A restore landing between the bot's generation check and its post of a
// batch (searchd stopped, restored and started again there, as the proxy
// does before it passes the post on): the batch landed in the restored
// database as if nothing had changed, its live message moved #staff's
// mark past the hole, and the checks after it found the mark held: the
// 150 messages posted after the backup never came back, not even at a
// new session's catch-up. The batch names the generation checked;
// searchd refuses it, and the bot checks again before it posts it.
func TestRestoreBetweenTheGenerationCheckAndThePost(t *testing.T) {
	var armed, restored atomic.Bool
	var e *env
	var backup string
	e = setup(t, func(c *Config) {
		c.Socket = searchdProxy(t, c.Socket, func(r *http.Request) bool {
			if r.Method == "POST" && r.URL.Path == "/v1/messages" && armed.CompareAndSwap(true, false) {
				e.sd.stop()
				e.restore(backup)
				e.sd.start()
				restored.Store(true)
			}
			return false
		})
	})
	backup, after := e.backupThen150()
	armed.Store(true)
	live := message(staff, user(alice, "alice"), t0.Add(301*24*time.Hour), "live: posted as searchd was restored")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	if !restored.Load() {
		t.Fatal("no batch was posted after the check")
	}
	done := strings.Count(e.log.String(), "backfill: guild done")
	e.discord.InvalidateSession() // a later new session, and its catch-up
	waitFor(t, "the new session's catch-up", func() bool { return strings.Count(e.log.String(), "backfill: guild done") > done })
	if n := e.unstored(after); n > 0 {
		t.Errorf("%d of %d messages posted after the backup never came back after a restore between a check and a post", n, len(after))
	}
}
