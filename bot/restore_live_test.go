package bot

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
	e.backfilled(int64(len(history())))
	backup := filepath.Join(t.TempDir(), "b.db")
	if out, err := exec.Command(e.sd.bin, "backup", "--data", e.sd.data, backup).CombinedOutput(); err != nil {
		t.Fatalf("backup: %v %s", err, out)
	}
	after := series(staff, t0.Add(300*24*time.Hour), 150, "after the backup")
	e.discord.Post(after...)
	e.waitStored("live messages", after...)
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.sd.stop()
	cmd := exec.Command(e.sd.bin, "restore", "--data", e.sd.data, backup)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+e.sd.data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("restore: %v %s", err, out)
	}
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
	e.backfilled(int64(len(history())))
	backup := filepath.Join(t.TempDir(), "b.db")
	if out, err := exec.Command(e.sd.bin, "backup", "--data", e.sd.data, backup).CombinedOutput(); err != nil {
		t.Fatalf("backup: %v %s", err, out)
	}
	after := series(staff, t0.Add(300*24*time.Hour), 150, "after the backup")
	e.discord.Post(after...)
	e.waitStored("live messages", after...)
	e.sd.stop()
	spooled := series(staff, t0.Add(301*24*time.Hour), 3, "spooled while searchd is down")
	e.discord.Post(spooled...)
	waitFor(t, "the spool to hold them", func() bool { return e.bot.spool.Len() > 0 })
	cmd := exec.Command(e.sd.bin, "restore", "--data", e.sd.data, backup)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+e.sd.data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("restore: %v %s", err, out)
	}
	e.sd.start()
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
