package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
)

// failPuts makes the spool fail (a disk error) while failing holds.
func (e *env) failPuts(failing *atomic.Bool) {
	e.bot.batch.mu.Lock()
	put := e.bot.batch.put
	e.bot.batch.put = func(b *api.MessageBatch) error {
		if failing.Load() {
			return errors.New("spool: no space left on device")
		}
		return put(b)
	}
	e.bot.batch.mu.Unlock()
}

// A spool full while searchd is away refuses messages, not deletions: a
// deletion of an old message (outside any catch-up's page) made then is
// applied after a restart of the bot with searchd back.
func TestDeletionsOutliveAFullSpoolAndARestart(t *testing.T) {
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.sd.stop()
	max := e.cfg.SpoolMax
	e.cfg.SpoolMax = 10 // full at once
	e.start()
	e.discord.WaitSessions(2, 0)
	e.discord.Post(message(general, user(alice, "alice"), t0.Add(300*24*time.Hour), "refused by the full spool"))
	e.discord.Delete(general, h[0].ID) // far older than a catch-up's page before the mark
	waitFor(t, "the spool refusing", func() bool { return strings.Contains(e.log.String(), "spool full") })
	time.Sleep(200 * time.Millisecond) // a few flushes
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.cfg.SpoolMax = max
	e.sd.start()
	e.start()
	waitFor(t, "the deletion made while the spool was full", func() bool { return !e.stored(h[0].ID) })
}

// An edit the spool could not take (a disk error) waits in memory and
// reaches searchd once the spool takes it: a catch-up reconciles only its
// channel's latest page, and the edit may take text out of an old message.
func TestEditRefusedBySpoolIsKept(t *testing.T) {
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	var failing atomic.Bool
	failing.Store(true)
	e.failPuts(&failing)
	edited := h[0]
	edited.Content, edited.EditedTimestamp = "redacted by its author", discord.NewTimestamp(t0.Add(400*24*time.Hour))
	e.discord.Edit(edited)
	waitFor(t, "the refusal", func() bool { return strings.Contains(e.log.String(), "cannot write to the spool") })
	time.Sleep(200 * time.Millisecond)
	if got := e.content(edited.ID); got == edited.Content {
		t.Fatal("the edit reached searchd while the spool refused it?")
	}
	failing.Store(false)
	waitFor(t, "the edit once the spool takes it", func() bool { return e.content(edited.ID) == edited.Content })
}

// A server the bot was removed from while away is forgotten even when the
// spool is full: its forget is taken past the bound, so the marks dropped
// with it cannot hide it after a restart.
func TestLeftServerForgottenThroughAFullSpool(t *testing.T) {
	e := removedWhileAway(t)
	ctx := context.Background()
	max := e.cfg.SpoolMax
	e.cfg.SpoolMax = 10 // full at once
	e.start()
	waitFor(t, "the forget", func() bool { return strings.Contains(e.log.String(), "forgetting servers") })
	time.Sleep(300 * time.Millisecond)
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.cfg.SpoolMax = max
	e.start()
	waitFor(t, "the server forgotten", func() bool {
		st, err := e.c.Stats(ctx)
		return err == nil && st.Messages == 1
	})
}

// hookRT calls before and after (either may be nil) around each request
// the bot makes to Discord, after only when it went through.
type hookRT struct {
	next          http.RoundTripper
	before, after func(*http.Request)
}

func (h hookRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.before != nil {
		h.before(r)
	}
	resp, err := h.next.RoundTrip(r)
	if err == nil && h.after != nil {
		h.after(r)
	}
	return resp, err
}

// A thread deleted while its page is in flight: THREAD_DELETE's forget
// reaches searchd before the page, which must not store the deleted
// thread's messages again (only those stored at the deletion had
// tombstones).
func TestThreadDeletedDuringItsPage(t *testing.T) {
	var d *discordtest.Discord
	var once sync.Once
	e := setup(t, func(dd *discordtest.Discord) { d = dd }, func(c *Config) {
		c.Transport = hookRT{next: c.Transport, after: func(r *http.Request) {
			if r.Method == "GET" && strings.HasSuffix(r.URL.Path, fmt.Sprintf("/channels/%d/messages", thread)) {
				once.Do(func() {
					d.DeleteChannel(thread)
					time.Sleep(time.Second) // the forget goes through the spool first
				})
			}
		}}
	})
	waitFor(t, "the guild's backfill", func() bool { return strings.Contains(e.log.String(), "backfill: guild done") })
	for _, m := range history() {
		if m.ChannelID == thread && e.stored(m.ID) {
			t.Errorf("message %d of the deleted thread is stored and served", m.ID)
		}
	}
}

// A server's active threads Discord failed to list (5xx past arikawa's
// retries) are listed again later: a thread with a sync mark asks for no
// catch-up of its own, so what it got while the bot was down would
// otherwise wait for the next new session.
func TestActiveThreadsListedAgain(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	missed := series(thread, t0.Add(300*24*time.Hour), 5, "in the thread while the bot was down")
	e.discord.AddHistory(missed...)
	e.discord.Fault("GET", "/threads/active", 502, 5)
	e.start()
	e.waitStored("the thread's messages from while the bot was down", missed...)
	if !strings.Contains(e.log.String(), "thread listings failed") {
		t.Error("the failed listing was not reported")
	}
	waitFor(t, "the status file without the failed listing", func() bool {
		st, _ := api.ReadBotStatus(e.cfg.SpoolDir)
		return st != nil && len(st.Incomplete) == 0
	})
}

// searchd restored from a backup holds less than the bot's sync marks
// say: the catch-up starts from what searchd holds, not from the marks,
// so what was posted after the backup comes back, however much of it.
func TestRestoreBringsBackWhatCameAfterTheBackup(t *testing.T) {
	e := setup(t)
	backup, after := e.backupThen150()
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.sd.stop()
	e.restore(backup)
	e.sd.start()
	e.start()
	e.waitStored("what was posted after the backup", after...)
}

// spoolHolding lists the spool's files (waiting and rejected) that hold
// text.
func (e *env) spoolHolding(text string) []string {
	var holding []string
	filepath.WalkDir(e.cfg.SpoolDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(text)) {
				holding = append(holding, filepath.Base(path))
			}
		}
		return nil
	})
	return holding
}

// While searchd is down the spool holds what members wrote. A message
// deleted (or edited, or its channel deleted) meanwhile kept its old text
// in the waiting batch on disk until searchd was back and took the
// removal spooled behind it, however long that was: only rejected/ was
// cleaned of removals (audit 13). Once searchd is back, what it stores is
// as Discord has it.
func TestDeletedTextLeavesTheWaitingSpool(t *testing.T) {
	const secret = "my passport number is zq-7731-secret"
	for _, tc := range []struct {
		name   string
		ch     discord.ChannelID
		remove func(e *env, m discord.Message)
		after  string // the message's text once searchd is back ("": gone)
	}{
		{"a deletion", general, func(e *env, m discord.Message) {
			e.discord.Dispatch("MESSAGE_DELETE", map[string]any{"id": m.ID, "channel_id": m.ChannelID, "guild_id": guildID})
		}, ""},
		{"a bulk deletion", general, func(e *env, m discord.Message) {
			e.discord.Dispatch("MESSAGE_DELETE_BULK", map[string]any{"ids": []discord.MessageID{m.ID}, "channel_id": m.ChannelID, "guild_id": guildID})
		}, ""},
		{"an edit", general, func(e *env, m discord.Message) {
			m.Content, m.EditedTimestamp = "my passport number is none of your business", discord.NewTimestamp(m.Timestamp.Time().Add(time.Minute))
			e.discord.Edit(m)
		}, "my passport number is none of your business"},
		{"a thread deleted", thread, func(e *env, m discord.Message) { e.discord.DeleteChannel(thread) }, ""},
		{"its channel deleted", thread, func(e *env, m discord.Message) { e.discord.DeleteChannel(general) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			e.backfilled(int64(len(history())))
			e.sd.stop()
			m := message(tc.ch, user(bob, "bob"), t0.Add(200*24*time.Hour), secret)
			e.discord.Dispatch("MESSAGE_CREATE", m)
			waitFor(t, "the message spooled", func() bool { return len(e.spoolHolding("zq-7731")) > 0 })
			waiting := e.bot.spool.Len()
			tc.remove(e, m)
			waitFor(t, "the removal spooled", func() bool { return e.bot.spool.Len() > waiting })
			time.Sleep(300 * time.Millisecond)
			if holding := e.spoolHolding("zq-7731"); len(holding) > 0 {
				t.Errorf("after %s, the old text stays in the spool while searchd is down: %v", tc.name, holding)
			}
			e.sd.start()
			waitFor(t, "the spool delivered", func() bool { return e.bot.spool.Len() == 0 })
			if got := e.content(m.ID); got != tc.after {
				t.Errorf("after %s and searchd back, searchd holds %q, want %q", tc.name, got, tc.after)
			}
		})
	}
}

// A message and its deletion spooled in one batch (within one flush)
// leave only the deletion on disk; a full edit spooled alone keeps its
// own text.
func TestMessageDeletedInItsOwnBatchIsNotSpooled(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	e.sd.stop()
	dm := message(general, user(bob, "bob"), t0.Add(200*24*time.Hour), "zq-7731 gone at once")
	m := upsert(&dm, nil)
	if err := e.bot.spoolPut(&api.MessageBatch{Messages: []api.MessageUpsert{m}, Deletes: []api.ID{m.ID}}); err != nil {
		t.Fatal(err)
	}
	edited := m
	edited.ID, edited.Content = m.ID+1, "zq-8842 edited text"
	at := time.Now()
	edited.EditedAt = &at
	if err := e.bot.spoolPut(&api.MessageBatch{Messages: []api.MessageUpsert{edited}}); err != nil {
		t.Fatal(err)
	}
	if holding := e.spoolHolding("zq-7731"); len(holding) > 0 {
		t.Errorf("a message deleted in its own batch is spooled: %v", holding)
	}
	if holding := e.spoolHolding("zq-8842"); len(holding) != 1 {
		t.Errorf("a full edit spooled alone is in %v", holding)
	}
}

// A thread the gateway state does not hold (archived, and the bot
// restarted while searchd was away: GUILD_CREATE lists only active
// threads) is known only from the waiting batch that placed it. When its
// parent channel was forgotten, the batches holding its messages, which
// name the thread but not the channel, were not read, and their text
// waited on disk until searchd was back; in the removal's own batch they
// were kept too. The thread may be placed before its messages, after them
// (a THREAD_UPDATE), or in the removal's batch.
func TestThreadKnownOnlyFromTheWaitingSpoolLeavesItWithItsChannel(t *testing.T) {
	const archived = api.ID(2090)
	place := &api.MessageBatch{Channels: []api.Channel{{ID: archived, GuildID: guildID, ParentID: general, Name: "zq-thread-name", Kind: "GuildPublicThread"}}}
	dm := message(discord.ChannelID(archived), user(bob, "bob"), t0.Add(200*24*time.Hour), "zq-7731 in an archived thread")
	said := &api.MessageBatch{Messages: []api.MessageUpsert{upsert(&dm, nil)}}
	forget := &api.MessageBatch{ForgetChannels: []api.ID{general}}
	for _, tc := range []struct {
		name    string
		batches []*api.MessageBatch
	}{
		{"placed first", []*api.MessageBatch{place, said, forget}},
		{"placed after its messages", []*api.MessageBatch{said, place, forget}},
		{"all in the removal's batch", []*api.MessageBatch{{Channels: place.Channels, Messages: said.Messages, ForgetChannels: forget.ForgetChannels}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			e.backfilled(int64(len(history())))
			e.sd.stop()
			if _, err := e.bot.state.Cabinet.Channel(discord.ChannelID(archived)); err == nil {
				t.Fatal("the state holds the thread")
			}
			for _, b := range tc.batches {
				c := *b
				if err := e.bot.spoolPut(&c); err != nil {
					t.Fatal(err)
				}
			}
			for _, text := range []string{"zq-7731", "zq-thread-name"} {
				if holding := e.spoolHolding(text); len(holding) > 0 {
					t.Errorf("%q stays in the spool after its thread's channel was forgotten: %v", text, holding)
				}
			}
		})
	}
}
