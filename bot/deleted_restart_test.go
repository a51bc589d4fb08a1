package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
)

// A thread deleted while Discord could not confirm it (its Get Channel
// failing) waits in the bot's memory; a restart meanwhile forgets that
// queue, and the start's look for channels deleted while the bot was
// away (forgetVanished) asked Discord once: failing again, it skipped
// the thread, and nothing asked again, so its messages stayed served
// until some later start. That look now queues the channel for the same
// confirmation as a THREAD_DELETE, asked again until Discord answers. An
// archived thread (not in the gateway's state after the restart) alike.
func TestThreadDeletedUnconfirmedAcrossARestartIsForgotten(t *testing.T) {
	const archivedThread = 2031
	at := t0.Add(300 * 24 * time.Hour)
	inArchived := series(archivedThread, at, 3, "in an archived thread deleted while unconfirmed")
	for _, tc := range []struct {
		name string
		ch   discord.ChannelID
	}{{"active", thread}, {"archived", archivedThread}} {
		t.Run(tc.name, func(t *testing.T) {
			var fail atomic.Bool
			e := setup(t, func(d *discordtest.Discord) {
				d.AddArchived(discord.Channel{ID: archivedThread, Type: discord.GuildPublicThread, Name: "side talk", ParentID: general,
					ThreadMetadata: &discord.ThreadMetadata{Archived: true, ArchiveTimestamp: discord.NewTimestamp(at.Add(time.Hour))}})
				d.AddHistory(inArchived...)
			}, func(c *Config) {
				c.Transport = failChannelGet{next: c.Transport, path: fmt.Sprintf("/channels/%d", tc.ch), fail: &fail}
			})
			h := append(history(), inArchived...)
			e.backfilled(int64(len(h)))
			fail.Store(true)
			e.discord.DeleteChannel(tc.ch)
			waitFor(t, "a failed question about the thread", func() bool {
				return strings.Contains(e.log.String(), "cannot ask Discord whether a channel was deleted")
			})
			if err := e.stop(); err != nil { // SIGTERM, the confirmation still queued
				t.Fatal(err)
			}
			before := strings.Count(e.log.String(), "backfill: guild done")
			e.start()
			waitFor(t, "the start's catch-up", func() bool { return strings.Count(e.log.String(), "backfill: guild done") > before })
			for _, m := range h {
				if m.ChannelID == tc.ch && !e.stored(m.ID) {
					t.Fatalf("message %d of the thread forgotten before Discord confirmed the deletion", m.ID)
				}
			}
			fail.Store(false) // Discord answers again: 404 Unknown Channel
			waitFor(t, "the deleted thread forgotten", func() bool {
				for _, m := range h {
					if m.ChannelID == tc.ch && e.stored(m.ID) {
						return false
					}
				}
				return true
			})
		})
	}
}

// holdThread is searchd taking no batch that places or holds a message
// of thread th until release is closed (searchd slow to come back).
type holdThread struct {
	Searchd
	th      api.ID
	release chan struct{}
}

func (h holdThread) PostMessages(ctx context.Context, mb *api.MessageBatch) (*api.BatchResult, error) {
	if slices.ContainsFunc(mb.Messages, func(m api.MessageUpsert) bool { return m.ChannelID == h.th }) ||
		slices.ContainsFunc(mb.Channels, func(c api.Channel) bool { return c.ID == h.th }) {
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.Searchd.PostMessages(ctx, mb)
}

// A thread started while searchd lagged (its messages only in the spool)
// and deleted while Discord could not confirm it, then a restart: the
// start's look for deleted channels asked searchd for the server's
// channels before the spool had delivered the thread, so it never
// looked at it, and the spool then stored the deleted thread's messages
// for good. The look now waits for the spool, as the catch-up does.
func TestThreadOnlyInTheSpoolDeletedUnconfirmedAcrossARestartIsForgotten(t *testing.T) {
	const newThread = 2032
	var fail atomic.Bool
	e := setup(t, func(c *Config) {
		c.Transport = failChannelGet{next: c.Transport, path: fmt.Sprintf("/channels/%d", newThread), fail: &fail}
	})
	e.backfilled(int64(len(history())))
	restart := func() (*Bot, chan struct{}) {
		if err := e.stop(); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		b, err := New(ctx, e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		b.searchd = holdThread{Searchd: b.searchd, th: newThread, release: release}
		e.bot, e.cancel, e.done = b, cancel, make(chan error, 1)
		go func() { e.done <- b.Run(ctx) }()
		return b, release
	}
	b, _ := restart()
	e.discord.WaitSessions(2, 0)
	e.discord.CreateChannel(discord.Channel{ID: newThread, Type: discord.GuildPublicThread, Name: "new thread", ParentID: general})
	posted := series(newThread, t0.Add(300*24*time.Hour), 2, "zq-8830 in a thread deleted while searchd lagged")
	e.discord.Post(posted...)
	waitFor(t, "the thread's messages spooled", func() bool { return len(e.spoolHolding("zq-8830")) > 0 && b.spool.Len() > 0 })
	fail.Store(true)
	e.discord.DeleteChannel(newThread)
	waitFor(t, "a failed question about the thread", func() bool {
		return strings.Contains(e.log.String(), "cannot ask Discord whether a channel was deleted")
	})
	from := len(e.log.String())
	_, release := restart()
	fail.Store(false)
	waitFor(t, "the restart's catch-up waiting for the spool", func() bool {
		return strings.Contains(e.log.String()[from:], "backfill: waiting until searchd has what the spool holds")
	})
	time.Sleep(200 * time.Millisecond)
	close(release)
	waitFor(t, "the restart's catch-up done", func() bool { return strings.Contains(e.log.String()[from:], "backfill: guild done") })
	waitFor(t, "the deleted thread's messages gone", func() bool { return e.unstored(posted) == len(posted) })
}
