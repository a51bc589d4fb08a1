package bot

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
)

// searchd restored from a backup while the bot was stopped: the bot's
// marks run ahead of what searchd holds. A member posts in #staff as the
// bot comes back, before the server's catch-up reaches #staff (held here
// on #general's pages): the live message, delivered by the spool, is
// searchd's newest of #staff, newer than the mark, so the catch-up took
// the mark for good and what was posted between the backup and the stop
// never came back from Discord.
func TestRestoreBringsBackWhatCameAfterTheBackupDespiteALiveMessage(t *testing.T) {
	var hold atomic.Bool
	release := make(chan struct{})
	generalPages := fmt.Sprintf("/channels/%d/messages", general)
	e := setup(t, func(c *Config) {
		c.Transport = hookRT{next: c.Transport, before: func(r *http.Request) {
			if hold.Load() && r.Method == "GET" && strings.HasSuffix(r.URL.Path, generalPages) {
				<-release
			}
		}}
	})
	backup, after := e.backupThen150()
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.sd.stop()
	e.restore(backup)
	e.sd.start()
	hold.Store(true)
	done := strings.Count(e.log.String(), "backfill: guild done")
	e.start()
	e.discord.WaitSessions(2, 0)
	live := message(staff, user(alice, "alice"), t0.Add(301*24*time.Hour), "live: posted as the bot came back")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	hold.Store(false)
	close(release)
	waitFor(t, "the server's catch-up", func() bool { return strings.Count(e.log.String(), "backfill: guild done") > done })
	if n := e.unstored(after); n > 0 {
		t.Errorf("%d of %d messages posted after the backup never came back after the restore", n, len(after))
	}
}

// searchd restored (stopped, `searchd restore`, started) while the bot
// runs: nothing told the bot, its channels stayed whole, what it spooled
// meanwhile and live messages moved their marks past the hole, and the
// spool delivered them just below the marks: even the next new session's
// catch-up started past the hole. The restore changes searchd's
// generation, and the bot takes its marks back before it stores more.
func TestRestoreWhileTheBotRunsBringsBackWhatCameAfterTheBackup(t *testing.T) {
	e := setup(t)
	after, spooled := restoreUnderTheBot(t, e, new(atomic.Bool))
	e.waitStored("what was spooled", spooled...)
	live := message(staff, user(alice, "alice"), t0.Add(302*24*time.Hour), "live: posted after the restore")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	done := strings.Count(e.log.String(), "backfill: guild done")
	e.discord.InvalidateSession() // a later new session, and its catch-up
	waitFor(t, "the new session's catch-up", func() bool { return strings.Count(e.log.String(), "backfill: guild done") > done })
	if n := e.unstored(after); n > 0 {
		t.Errorf("%d of %d messages posted after the backup never came back after a restore under the running bot", n, len(after))
	}
}

// searchdProxy stands between the bot and searchd on a socket of its own;
// fail, when set, answers a request with 500 instead of passing it on. A
// searchd that is down closes the bot's connection, as no socket would.
func searchdProxy(t *testing.T, sock string, fail func(*http.Request) bool) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dsp") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "p.sock"))
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "searchd.sock" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
		},
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail != nil && fail(r) {
			http.Error(w, `{"error":"injected"}`, http.StatusInternalServerError)
			return
		}
		rp.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// restoreUnderTheBot runs TestRestoreWhileTheBotRunsBringsBackWhatCameAfterTheBackup's
// restore (150 messages of #staff after the backup, 3 spooled while
// searchd is down) with armed set once searchd is back, and returns
// the messages posted after the backup and those spooled.
func restoreUnderTheBot(t *testing.T, e *env, armed *atomic.Bool) (after, spooled []discord.Message) {
	t.Helper()
	backup, after := e.backupThen150()
	e.sd.stop()
	spooled = series(staff, t0.Add(301*24*time.Hour), 3, "spooled while searchd is down")
	e.discord.Post(spooled...)
	waitFor(t, "the spool to hold them", func() bool { return e.bot.spool.Len() > 0 })
	e.restore(backup)
	armed.Store(true)
	e.sd.start()
	return after, spooled
}

// The bot's first look at the restored database fails (searchd answers
// 500 to its first ?through= question): the check gave up and the post
// went on, so the spooled batch reached the restored database first, and
// then #staff's newest at or before its mark was the mark itself: the
// mark never came back below the hole, not even at a new session's
// catch-up.
func TestRestoreUnderTheBotSurvivesAFailedGenerationCheck(t *testing.T) {
	var armed, failed atomic.Bool
	e := setup(t, func(c *Config) {
		c.Socket = searchdProxy(t, c.Socket, func(r *http.Request) bool {
			return armed.Load() && r.URL.Query().Has("through") && failed.CompareAndSwap(false, true)
		})
	})
	after, spooled := restoreUnderTheBot(t, e, &armed)
	e.waitStored("what was spooled", spooled...)
	done := strings.Count(e.log.String(), "backfill: guild done")
	e.discord.InvalidateSession() // a later new session, and its catch-up
	waitFor(t, "the new session's catch-up", func() bool { return strings.Count(e.log.String(), "backfill: guild done") > done })
	if !failed.Load() {
		t.Fatal("no ?through= question was asked")
	}
	if n := e.unstored(after); n > 0 {
		t.Errorf("%d of %d messages posted after the backup never came back after a failed generation check", n, len(after))
	}
}

// A check cut short after it took #staff's mark back (#general's
// question fails once, asked after #staff's): the next check found no
// mark to take back and asked for no catch-up, so #staff, no longer
// whole, was never caught up (until a new session) and its live messages
// stopped moving its mark.
func TestRestoreUnderTheBotCatchesUpAfterACheckCutShort(t *testing.T) {
	var armed, staffAsked, cutShort atomic.Bool
	staffPath := fmt.Sprintf("/v1/backfill/%d", staff)
	generalPath := fmt.Sprintf("/v1/backfill/%d", general)
	e := setup(t, func(c *Config) {
		c.Socket = searchdProxy(t, c.Socket, func(r *http.Request) bool {
			if !armed.Load() || cutShort.Load() || !r.URL.Query().Has("through") {
				return false
			}
			switch r.URL.Path {
			case staffPath:
				staffAsked.Store(true)
			case generalPath:
				// Before #staff (the marks' order is random): the check
				// stops here, #staff untouched. After: once, cut short.
				return !staffAsked.Swap(false) || cutShort.CompareAndSwap(false, true)
			}
			return false
		})
	})
	after, spooled := restoreUnderTheBot(t, e, &armed)
	// Checks asked here, one after another, until one is cut short after
	// #staff's question (the spool's own retries wait longer each time).
	waitFor(t, "a check cut short after #staff's question", func() bool {
		e.bot.checkGeneration(context.Background())
		return cutShort.Load()
	})
	e.waitStored("what was spooled", spooled...)
	live := message(staff, user(alice, "alice"), t0.Add(302*24*time.Hour), "live: posted after the restore")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	waitFor(t, "what came after the backup", func() bool { return e.unstored(after) == 0 })
}

// backupThen150 backs searchd up once the history is stored, then has 150
// messages posted in #staff and stored: what a restore of the backup
// lacks.
func (e *env) backupThen150() (backup string, after []discord.Message) {
	e.t.Helper()
	e.backfilled(int64(len(history())))
	backup = filepath.Join(e.t.TempDir(), "b.db")
	if out, err := exec.Command(e.sd.bin, "backup", "--data", e.sd.data, backup).CombinedOutput(); err != nil {
		e.t.Fatalf("backup: %v %s", err, out)
	}
	after = series(staff, t0.Add(300*24*time.Hour), 150, "after the backup")
	e.discord.Post(after...)
	e.waitStored("live messages", after...)
	return backup, after
}

// restore runs searchd restore of backup (searchd stopped).
func (e *env) restore(backup string) {
	e.t.Helper()
	cmd := exec.Command(e.sd.bin, "restore", "--data", e.sd.data, backup)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+e.sd.data)
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("restore: %v %s", err, out)
	}
}
