package bot

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
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

// searchd restored while the bot pages through a channel's history (a
// backup made at its first page, the restore at its fourth): the history
// pass kept its place in memory and saved it as the restored database's
// checkpoint after the page it was on, so the pages between the backup's
// checkpoint and that one, which the restored database lacks, were never
// fetched again: the checkpoint said they were done.
func TestRestoreDuringTheHistoryPassLeavesNoHole(t *testing.T) {
	old := series(staff, t0.Add(-90*24*time.Hour), 450, "old history")
	ids := map[string]bool{}
	for _, m := range old {
		ids[m.ID.String()] = true
	}
	var pages, holdAt atomic.Int32
	holdAt.Store(2)
	reached, release := make(chan struct{}), make(chan struct{})
	staffPages := fmt.Sprintf("/channels/%d/messages", staff)
	e := setup(t, func(d *discordtest.Discord) { d.AddHistory(old...) }, func(c *Config) {
		c.Transport = hookRT{next: c.Transport, before: func(r *http.Request) {
			// The history pass's pages: before one of the old messages.
			if r.Method != "GET" || !strings.HasSuffix(r.URL.Path, staffPages) || !ids[r.URL.Query().Get("before")] {
				return
			}
			if pages.Add(1) == holdAt.Load() {
				reached <- struct{}{}
				<-release
			}
		}}
	})
	<-reached // the first history page stored, its checkpoint saved
	backup := filepath.Join(t.TempDir(), "b.db")
	if out, err := exec.Command(e.sd.bin, "backup", "--data", e.sd.data, backup).CombinedOutput(); err != nil {
		t.Fatalf("backup: %v %s", err, out)
	}
	holdAt.Store(4)
	release <- struct{}{}
	<-reached // two more pages stored: the backup lacks them
	e.sd.stop()
	e.restore(backup)
	e.sd.start()
	release <- struct{}{}
	waitFor(t, "the history pass to reach the channel's start", func() bool {
		cp, err := e.c.Backfill(context.Background(), api.ID(staff))
		return err == nil && cp.Complete
	})
	if n := e.unstored(old); n > 0 {
		t.Errorf("%d of %d messages of #staff's history never came back after a restore during its history pass", n, len(old))
	}
}

// Once the marks know which database searchd serves, a batch names it
// and goes: searchd refuses one naming another, so asking it before each
// batch (GET /v1/healthz) is one round trip a batch for nothing. Five live
// messages, each its own batch, do not ask it each.
func TestBatchesNameTheKnownGenerationWithoutAsking(t *testing.T) {
	var asked atomic.Int32
	e := setup(t, func(c *Config) {
		c.Socket = searchdProxy(t, c.Socket, func(r *http.Request) bool {
			if r.URL.Path == "/v1/healthz" {
				asked.Add(1)
			}
			return false
		})
	})
	waitFor(t, "the first catch-up", func() bool { return strings.Contains(e.log.String(), "backfill: guild done") })
	first := message(staff, user(alice, "alice"), t0.Add(300*24*time.Hour), "live: the first")
	e.discord.Post(first)
	e.waitStored("the first live message", first)
	// A history pass asks once for itself (it names the generation in
	// its checkpoints); the batches must not, each.
	before := asked.Load()
	for i := range 5 {
		m := message(staff, user(alice, "alice"), t0.Add(300*24*time.Hour+time.Duration(i+1)*time.Minute), fmt.Sprintf("live: number %d", i))
		e.discord.Post(m)
		e.waitStored("a live message", m)
	}
	n := asked.Load() - before
	t.Logf("asked %d times for 5 batches", n)
	if n >= 5 {
		t.Errorf("searchd asked which database it serves %d times for 5 batches", n)
	}
}
