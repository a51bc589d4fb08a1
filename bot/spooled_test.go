package bot

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dsearch/shared/api"

	"github.com/diamondburned/arikawa/v3/discord"
)

// holdBatch is searchd taking no batch that holds message id until
// release is closed: the spool's delivery of it hangs (searchd slow to
// come back, or a long queue ahead of it).
type holdBatch struct {
	Searchd
	id      api.ID
	release chan struct{}
}

func (h holdBatch) PostMessages(ctx context.Context, mb *api.MessageBatch) (*api.BatchResult, error) {
	if slices.ContainsFunc(mb.Messages, func(m api.MessageUpsert) bool { return m.ID == h.id }) {
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.Searchd.PostMessages(ctx, mb)
}

// A live message waits in the spool (searchd does not take it yet) and is
// deleted on Discord while the bot misses the deletion; a catch-up then
// reconciles #general. Its page lacks the message, but so did searchd,
// so nothing was deleted; the spool then stored it, deleted on Discord,
// for good. The catch-up waited a minute at most for the spool.
func TestSpooledMessageDeletedMeanwhileStaysDeleted(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	gone := message(general, user(alice, "alice"), t0.Add(300*24*time.Hour), "posted and deleted while searchd lagged")
	var waited atomic.Bool
	b, release, done, before := e.restartHolding(gone.ID, func(b *Bot) { b.spoolWait = func() { waited.Store(true) } })

	e.discord.Post(gone)
	waitFor(t, "the message spooled", func() bool { return b.spool.Len() > 0 })
	e.discord.Remove(general, gone.ID) // deleted; the bot is not told
	b.Backfill()                       // a catch-up (SIGHUP, or a new session's)
	// Released once the catch-up waits for the spool, or else once it is
	// done: what it did before the message reached searchd is final.
	waitFor(t, "the catch-up done or waiting for the spool", func() bool {
		return done() > before || waited.Load()
	})
	close(release)
	waitFor(t, "the catch-up done", func() bool { return done() > before })
	waitFor(t, "the spool empty", func() bool { return b.spool.Len() == 0 })
	if e.stored(gone.ID) {
		t.Error("a message deleted on Discord is stored and served: the spool stored it after the catch-up reconciled its page")
	}
}

// A catch-up that has waited long for the spool (searchd not taking its
// oldest batch, say one it refuses for good without calling it bad)
// tells the operator which batch it waits on, with no text, so a stuck
// spool that holds back every catch-up is seen.
func TestCatchUpWaitingLongOnTheSpoolSaysWhichBatch(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	held := message(general, user(alice, "alice"), t0.Add(300*24*time.Hour), "zq-7731 searchd does not take")
	b, release, done, before := e.restartHolding(held.ID, func(b *Bot) { b.spoolStuckAfter = 300 * time.Millisecond })

	e.discord.Post(held)
	waitFor(t, "the message spooled", func() bool { return len(e.spoolHolding("zq-7731")) > 0 })
	seq := strings.TrimLeft(strings.TrimSuffix(e.spoolHolding("zq-7731")[0], ".json"), "0")
	b.Backfill()
	defer func() {
		if t.Failed() {
			t.Log(e.log.String())
		}
	}()
	waitFor(t, "the catch-up's warning naming the batch", func() bool {
		return strings.Contains(e.log.String(), "a catch-up still waits for searchd") && strings.Contains(e.log.String(), "oldest_batch="+seq+" ")
	})
	if strings.Contains(e.log.String(), "zq-7731") {
		t.Error("the log holds the waiting message's text")
	}
	close(release)
	waitFor(t, "the catch-up done", func() bool { return done() > before })
}

// restartHolding restarts the bot with a searchd that holds the batch
// naming message id until release is closed; tweak, if set, sets the
// bot's test hooks before it runs. It returns once the catch-ups of the
// start are done, with their count (done counts catch-ups).
func (e *env) restartHolding(id discord.MessageID, tweak func(*Bot)) (b *Bot, release chan struct{}, done func() int, before int) {
	e.t.Helper()
	if err := e.stop(); err != nil {
		e.t.Fatal(err)
	}
	done = func() int { return strings.Count(e.log.String(), "backfill: guild done") }
	before = done()
	release = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	b, err := New(ctx, e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	b.searchd = holdBatch{Searchd: b.searchd, id: api.ID(id), release: release}
	if tweak != nil {
		tweak(b)
	}
	e.bot, e.cancel, e.done = b, cancel, make(chan error, 1)
	go func() { e.done <- b.Run(ctx) }()
	waitFor(e.t, "the catch-up on start", func() bool { return done() > before })
	// Until no further catch-up of the start is queued (GUILD_CREATE and
	// the session's start may each queue one): one running when the held
	// message is posted pages it from Discord straight to the holding
	// searchd, and the backfill loop waits there, not on the spool.
	for n, quiet := done(), time.Now(); time.Since(quiet) < time.Second; time.Sleep(50 * time.Millisecond) {
		if m := done(); m != n {
			n, quiet = m, time.Now()
		}
	}
	before = done()
	return b, release, done, before
}
