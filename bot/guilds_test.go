package bot

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
)

// A server the bot was removed from while it was down sent no
// GUILD_DELETE the bot could see: at its next start READY no longer lists
// it, Discord refuses it (403), and it is forgotten (issue 23.3). A server
// the bot never synced (imported from an export) stays.
func TestGuildLeftWhileAwayIsForgotten(t *testing.T) {
	e := removedWhileAway(t)
	ctx := context.Background()
	e.start()
	waitFor(t, "the server the bot left forgotten", func() bool {
		st, err := e.c.Stats(ctx)
		return err == nil && st.Messages == 1
	})
	if _, err := e.c.Message(ctx, 7000, 0, 0); err != nil {
		t.Errorf("the imported server was forgotten too: %v", err)
	}
	time.Sleep(100 * time.Millisecond) // nothing more is forgotten
	if st, _ := e.c.Stats(ctx); st.Messages != 1 {
		t.Errorf("%d messages after the start, want the imported one", st.Messages)
	}
}

// dsearch-bot --reconcile, run while the bot is stopped, forgets the
// server the bot was removed from meanwhile, as a start does, and keeps
// an imported server it never joined.
func TestReconcileForgetsGuildLeftWhileAway(t *testing.T) {
	e := removedWhileAway(t)
	ctx := context.Background()
	var out strings.Builder
	if err := Reconcile(ctx, e.cfg, &out); err != nil {
		t.Fatalf("reconcile: %v\n%s", err, &out)
	}
	if st, err := e.c.Stats(ctx); err != nil || st.Messages != 1 {
		t.Errorf("after the reconciliation: %+v, %v; want only the imported message\n%s", st, err, &out)
	}
	if _, err := e.c.Message(ctx, 7000, 0, 0); err != nil {
		t.Errorf("the imported server was forgotten too: %v", err)
	}
	if !strings.Contains(out.String(), "servers the bot was removed from, forgotten: 1") {
		t.Errorf("the reconciliation does not say it forgot the server:\n%s", &out)
	}
}

// removedWhileAway syncs the test server, imports a server the bot never
// joined (5000, message 7000), stops the bot and removes it from the
// test server while no bot is connected to see its GUILD_DELETE.
func removedWhileAway(t *testing.T) *env {
	t.Helper()
	e := setup(t)
	e.backfilled(int64(len(history())))
	imported := &api.MessageBatch{
		Guilds:   []api.Guild{{ID: 5000, Name: "archive"}},
		Channels: []api.Channel{{ID: 6000, GuildID: 5000, Name: "old", Kind: "GuildTextChat"}},
		Messages: []api.MessageUpsert{{ID: 7000, GuildID: 5000, ChannelID: 6000, Author: api.Author{ID: 9, Username: "x"},
			CreatedAt: t0, Content: "an imported message"}},
	}
	if _, err := e.c.PostMessages(context.Background(), imported); err != nil {
		t.Fatal(err)
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.discord.RemoveBot()
	return e
}

// The bot is removed from the server while a page of #general's history
// is in flight (the first sync of a large server takes hours). The
// GUILD_DELETE's forget_guilds reaches searchd first; the page, posted
// after it, stores the guild's messages again: only messages stored at
// the forget got tombstones, and nothing keeps a left guild out (deleted
// channels have deleted_channels; guilds have nothing). They stay served
// until the next new session's forgetLeftGuilds.
func TestGuildLeftDuringAPage(t *testing.T) {
	var d *discordtest.Discord
	var once sync.Once
	e := setup(t, func(dd *discordtest.Discord) { d = dd }, func(c *Config) {
		c.Transport = hookRT{next: c.Transport, after: func(r *http.Request) {
			if r.Method == "GET" && strings.HasSuffix(r.URL.Path, fmt.Sprintf("/channels/%d/messages", general)) {
				once.Do(func() {
					d.RemoveBot()
					time.Sleep(time.Second) // the forget goes through the spool first
				})
			}
		}}
	})
	waitFor(t, "the guild's forget", func() bool { return strings.Contains(e.log.String(), "the bot was removed from a server") })
	time.Sleep(2 * time.Second) // the page in flight, and whatever follows it
	st, err := e.c.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Messages != 0 {
		t.Errorf("%d messages of the server the bot was removed from are stored and served", st.Messages)
	}
	if r, err := e.c.Search(context.Background(), map[string][]string{"q": {"weather"}, "mode": {"lexical"}}); err == nil && len(r.Results) > 0 {
		t.Errorf("search still finds the left server's messages: %d results", len(r.Results))
	}
}

// The bot is removed from a server and invited back (an accidental kick,
// a moderator's mistake): the server's history comes back. GUILD_DELETE
// forgot it with tombstones (nothing came back), then the re-invite's
// placement waited in the batcher (the production flush, 1 s, not the
// tests' 30 ms) while the pages went straight to searchd, which still kept
// the server out and skipped them; the history pass then saved itself
// complete.
func TestGuildAddedBackComesBack(t *testing.T) {
	e := setup(t, func(c *Config) { c.FlushEvery = time.Second })
	h := history()
	e.backfilled(int64(len(h)))
	e.discord.RemoveBot()
	waitFor(t, "the guild forgotten", func() bool {
		st, err := e.c.Stats(context.Background())
		return err == nil && st.Messages == 0
	})
	e.discord.AddBot()
	waitFor(t, "the backfill after the invitation", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 2 })
	time.Sleep(2 * time.Second) // the placement flushed and applied
	e.bot.Backfill()            // SIGHUP, for good measure
	waitFor(t, "a SIGHUP backfill", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 3 })
	time.Sleep(time.Second)
	st, err := e.c.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Messages != int64(len(h)) {
		t.Errorf("after the bot was invited back (flush every 1 s): %d of %d messages searchable", st.Messages, len(h))
	}
}

// A bare 403 or 404 (a proxy's or a route's, code 0) does not say that a
// server or channel is gone: only Discord's own codes forget (Missing
// Access 50001 or Unknown Guild 10004 for a server, Unknown Channel 10003
// for a channel). Forgetting on doubt throws a history away for good.
func TestBareRefusalForgetsNothing(t *testing.T) {
	ctx := context.Background()
	t.Run("a server", func(t *testing.T) {
		e := removedWhileAway(t)
		e.discord.Fault("GET", fmt.Sprintf("/guilds/%d", guildID), http.StatusForbidden, 1000)
		var out strings.Builder
		if err := Reconcile(ctx, e.cfg, &out); err != nil {
			t.Fatalf("reconcile: %v\n%s", err, &out)
		}
		if st, err := e.c.Stats(ctx); err != nil || st.Messages != int64(len(history())+1) {
			t.Errorf("after the reconciliation: %+v, %v; want every message kept", st, err)
		}
	})
	t.Run("a thread", func(t *testing.T) {
		e := setup(t)
		e.backfilled(int64(len(history())))
		if err := e.stop(); err != nil {
			t.Fatal(err)
		}
		e.discord.DeleteChannel(thread) // unlisted now, and Get Channel answers a bare 404
		e.discord.Fault("GET", fmt.Sprintf("/channels/%d", thread), http.StatusNotFound, 1000)
		var out strings.Builder
		if err := Reconcile(ctx, e.cfg, &out); err != nil {
			t.Fatalf("reconcile: %v\n%s", err, &out)
		}
		if st, err := e.c.Stats(ctx); err != nil || st.Messages != int64(len(history())) {
			t.Errorf("after the reconciliation: %+v, %v; want the thread's message kept", st, err)
		}
	})
}
