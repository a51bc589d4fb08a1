package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
)

// stored reports whether searchd holds a message.
func (e *env) stored(id discord.MessageID) bool {
	_, err := e.c.Message(context.Background(), api.ID(id), 0, 0)
	return err == nil
}

// content is a stored message's text ("" when not stored).
func (e *env) content(id discord.MessageID) string {
	m, err := e.c.Message(context.Background(), api.ID(id), 0, 0)
	if err != nil {
		return ""
	}
	return m.Message.Content
}

func (e *env) waitStored(what string, msgs ...discord.Message) {
	e.t.Helper()
	waitFor(e.t, what, func() bool {
		for _, m := range msgs {
			if !e.stored(m.ID) {
				return false
			}
		}
		return true
	})
}

func series(ch discord.ChannelID, from time.Time, n int, text string) []discord.Message {
	var out []discord.Message
	for i := range n {
		out = append(out, message(ch, user(bob, "bob"), from.Add(time.Duration(i)*time.Second), fmt.Sprintf("%s %d", text, i)))
	}
	return out
}

// After a restart, a live message in a channel whose catch-up has not run
// yet (another channel's pages are slow) does not hide the messages sent
// while the bot was down (issue 24.1).
func TestCatchupAfterRestartIgnoresLiveMessages(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	// More than the page before the mark that every catch-up reconciles.
	missed := series(staff, t0.Add(300*24*time.Hour), 150, "said while the bot was down")
	e.discord.AddHistory(missed...)
	e.discord.DeleteChannel(thread)                           // unseen: no bot is connected
	e.discord.Fault("GET", "/channels/2000/messages", 429, 2) // #general's catch-up waits
	e.start()
	e.discord.WaitSessions(2, 0)
	live := message(staff, user(alice, "alice"), t0.Add(301*24*time.Hour), "live after the restart")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	e.waitStored("the messages sent while the bot was down", missed...)
	waitFor(t, "the thread deleted while the bot was down forgotten", func() bool { return !e.stored(history()[254].ID) })
}

// A thread created while the bot runs has no mark from a guild's
// catch-up: its first live message asks for one, so that a restart
// catches it up from its mark too.
func TestThreadCreatedLiveIsCaughtUpAfterRestart(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	const newThread = 2010
	e.discord.CreateChannel(discord.Channel{ID: newThread, Type: discord.GuildPublicThread, Name: "new plans", ParentID: general})
	first := series(newThread, t0.Add(300*24*time.Hour), 3, "in the new thread")
	e.discord.Post(first...)
	e.waitStored("the new thread's messages", first...)
	waitFor(t, "the new thread's mark", func() bool { _, ok := e.bot.marks.mark(newThread); return ok })
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	missed := series(newThread, t0.Add(301*24*time.Hour), 150, "while the bot was down")
	e.discord.AddHistory(missed...)
	e.discord.Fault("GET", "/channels/2000/messages", 429, 2)
	e.start()
	e.discord.WaitSessions(2, 0)
	live := message(newThread, user(alice, "alice"), t0.Add(302*24*time.Hour), "live after the restart")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	e.waitStored("the new thread's messages sent while the bot was down", missed...)
}

// A guild outage (GUILD_DELETE unavailable, later GUILD_CREATE) in one
// session: nothing of the guild arrives meanwhile, so its channels have a
// gap that a live message after the outage does not hide; nothing is
// forgotten.
func TestGuildOutageIsCaughtUp(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	e.discord.GuildOutage()
	missed := series(staff, t0.Add(300*24*time.Hour), 150, "during the guild outage")
	e.discord.AddHistory(missed...)
	e.discord.Fault("GET", "/channels/2000/messages", 429, 2)
	e.discord.GuildBack()
	live := message(staff, user(alice, "alice"), t0.Add(301*24*time.Hour), "live after the outage")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	e.waitStored("the messages of the outage", missed...)
	if !e.stored(history()[0].ID) {
		t.Error("an outage forgot the guild")
	}
	if i, _ := e.discord.Sessions(); i != 1 {
		t.Errorf("%d sessions; the outage should not end the session", i)
	}
}

// A refused RESUME (INVALID_SESSION, a new session) loses the session's
// events: every channel is caught up from its mark, a live message does
// not hide the gap, and the edits and deletions made meanwhile are
// reconciled (issues 24.1, 24.9, 23.3).
func TestCatchupAndReconcileAfterInvalidSession(t *testing.T) {
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	before := series(general, t0.Add(200*24*time.Hour), 3, "live before the outage")
	e.discord.Post(before...)
	e.waitStored("live messages", before...)

	e.discord.Offline(true)
	e.discord.RefuseResume()
	missed := series(staff, t0.Add(300*24*time.Hour), 150, "said during the outage")
	e.discord.Post(missed...)
	edited := h[250]
	edited.Content, edited.EditedTimestamp = "the boiler was fine after all", discord.NewTimestamp(t0.Add(301*24*time.Hour))
	e.discord.Edit(edited)
	e.discord.Delete(general, h[251].ID)
	e.discord.Delete(general, before[1].ID)
	e.discord.Fault("GET", "/channels/2000/messages", 429, 2)
	threadPages := len(e.discord.Calls("GET", "/channels/2002/messages"))
	e.discord.Offline(false)
	e.discord.WaitSessions(2, 0)
	live := message(staff, user(alice, "alice"), t0.Add(302*24*time.Hour), "live after the new session")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	e.waitStored("the messages of the lost session", missed...)
	waitFor(t, "the edit made during the outage", func() bool { return e.content(edited.ID) == edited.Content })
	waitFor(t, "the deletions made during the outage", func() bool { return !e.stored(h[251].ID) && !e.stored(before[1].ID) })
	if !e.stored(before[0].ID) || !e.stored(h[250].ID) {
		t.Error("reconciliation deleted a message Discord still has")
	}
	// The cost in a quiet channel: the page before the mark, and one
	// (empty) page after it.
	pages := func() int { return len(e.discord.Calls("GET", "/channels/2002/messages")) - threadPages }
	waitFor(t, "the quiet thread's catch-up", func() bool { return pages() >= 2 })
	time.Sleep(200 * time.Millisecond)
	if n := pages(); n != 2 {
		t.Errorf("the quiet thread's catch-up took %d requests, want 2", n)
	}
}

// A RESUME replays what the session missed: nothing needs fetching. An
// INVALID_SESSION starts a new session, which catches up.
func TestResumeReplaysMissedEvents(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	e.discord.Offline(true)
	missed := series(thread, t0.Add(300*24*time.Hour), 3, "replayed")
	e.discord.Post(missed...)
	e.discord.Offline(false)
	e.discord.WaitSessions(1, 1)
	e.waitStored("the replayed messages", missed...)

	// INVALID_SESSION on a live connection: a new session, and a catch-up
	// of what the gateway never sent.
	unsent := series(thread, t0.Add(301*24*time.Hour), 150, "never dispatched")
	e.discord.AddHistory(unsent...)
	e.discord.InvalidateSession()
	e.discord.WaitSessions(2, 1)
	e.waitStored("the messages a new session caught up", unsent...)
}

// The spool full while searchd is away: the dropped messages are fetched
// again, even when live messages reach the channel first (issue 24.1).
func TestSpoolOverflowIsCaughtUp(t *testing.T) {
	e := setup(t, func(c *Config) { c.SpoolMax = 4000 })
	e.backfilled(int64(len(history())))
	e.sd.stop()
	dropped := series(thread, t0.Add(300*24*time.Hour), 150, "while searchd was away")
	for _, m := range dropped {
		e.discord.Post(m)
		time.Sleep(time.Millisecond)
	}
	waitFor(t, "the overflow", func() bool { return strings.Contains(e.log.String(), "spool full") })
	e.sd.start()
	live := message(thread, user(alice, "alice"), t0.Add(301*24*time.Hour), "live after searchd came back")
	e.discord.Post(live)
	e.waitStored("the live message", live)
	e.waitStored("the messages the full spool dropped", dropped...)
}

// Any failure to spool (here a full disk) leads to a catch-up, a count in
// the status file and a warning; a deletion waits in memory (issue 24.3).
func TestSpoolFailureIsCaughtUp(t *testing.T) {
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	var failing atomic.Bool
	failing.Store(true)
	e.failPuts(&failing)
	lost := series(staff, t0.Add(300*24*time.Hour), 20, "written to a full disk")
	e.discord.Post(lost...)
	e.discord.Delete(staff, h[252].ID)   // reconciled by #staff's catch-up
	e.discord.Delete(general, h[250].ID) // #general has no gap: the deletion waits in memory
	// The catch-up goes straight to searchd: it need not wait for the disk.
	e.waitStored("the messages the spool could not take", lost...)
	waitFor(t, "the deletion reconciled", func() bool { return !e.stored(h[252].ID) })
	time.Sleep(100 * time.Millisecond) // a few flushes
	if !e.stored(h[250].ID) {
		t.Fatal("the deletion reached searchd while the spool could not take it?")
	}
	failing.Store(false)
	waitFor(t, "the deletion that waited in memory", func() bool { return !e.stored(h[250].ID) })
	st, err := api.ReadBotStatus(e.cfg.SpoolDir)
	if err != nil || st == nil || st.SpoolFailures == 0 || !strings.Contains(st.LastSpoolFailure, "no space left") {
		t.Errorf("status after spool failures: %+v, %v", st, err)
	}
	if !strings.Contains(e.log.String(), "cannot write to the spool") {
		t.Error("no warning of the spool failure in the log")
	}
}

// Discord answers a bot that may view a channel but not read its history
// with an empty page, not 403. A catch-up of such a channel (here after a
// spool failure) must not take the empty page for a channel whose every
// message was deleted: the stored history stays, the status says why the
// channel is not synced, and once the permission is back it syncs again.
func TestNoHistoryPermissionDeletesNothing(t *testing.T) {
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	ch := fakeGuild().Channels[1] // #general
	noHistory := ch
	noHistory.Overwrites = []discord.Overwrite{{ID: discord.Snowflake(guildID), Type: discord.OverwriteRole, Deny: discord.PermissionReadMessageHistory}}
	e.discord.UpdateChannel(noHistory)
	waitFor(t, "the bot's state to see the overwrite", func() bool { return !e.bot.botReadsHistory(ch) })
	var failing atomic.Bool
	failing.Store(true)
	e.bot.batch.mu.Lock()
	put := e.bot.batch.put
	e.bot.batch.put = func(b *api.MessageBatch) error {
		if failing.CompareAndSwap(true, false) {
			return errors.New("spool: no space left on device")
		}
		return put(b)
	}
	e.bot.batch.mu.Unlock()
	e.discord.Post(message(general, user(alice, "alice"), t0.Add(300*24*time.Hour), "live in general"))
	waitFor(t, "the channel reported as not synced", func() bool {
		st, _ := api.ReadBotStatus(e.cfg.SpoolDir)
		return st != nil && slices.ContainsFunc(st.Incomplete, func(c api.IncompleteChannel) bool {
			return c.Channel == api.ID(general) && strings.Contains(c.Why, "Read Message History")
		})
	})
	for _, m := range h {
		if m.ChannelID == general && !e.stored(m.ID) {
			t.Fatalf("message %d of #general was deleted for an empty page", m.ID)
		}
	}
	e.discord.UpdateChannel(ch)
	waitFor(t, "the bot's state to see the permission back", func() bool { return e.bot.botReadsHistory(ch) })
	e.bot.Backfill()
	waitFor(t, "#general synced once the permission is back", func() bool {
		st, _ := api.ReadBotStatus(e.cfg.SpoolDir)
		return st != nil && len(st.Incomplete) == 0
	})
	if !e.stored(h[0].ID) || !e.stored(h[len(h)-1].ID) {
		t.Error("stored history lost after the permission came back")
	}
}

// Every close code Discord documents as fatal ends Run with an error that
// says what to do, left in the status file for --check (issue 24.2).
func TestFatalGatewayCloseStopsTheBot(t *testing.T) {
	e := setup(t)
	for i, code := range []int{4004, 4010, 4011, 4012, 4013, 4014} {
		if i > 0 {
			e.start()
		}
		e.discord.WaitSessions(i+1, 0)
		e.discord.CloseGateway(code, "closed by the test")
		var err error
		select {
		case err = <-e.done:
			e.done = nil
		case <-time.After(10 * time.Second):
			t.Fatalf("close %d: the bot neither reconnected nor exited", code)
		}
		var fatal *FatalCloseError
		if !errors.As(err, &fatal) || fatal.Code != code || !strings.Contains(err.Error(), fmt.Sprint(code)) {
			t.Errorf("close %d: Run returned %v", code, err)
		}
		st, _ := api.ReadBotStatus(e.cfg.SpoolDir)
		if st == nil || !strings.Contains(st.Stopped, fmt.Sprint(code)) {
			t.Errorf("close %d: status %+v", code, st)
		}
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(&FatalCloseError{4014}), "Message Content Intent") ||
		!strings.Contains(fmt.Sprint(&FatalCloseError{4004}), "token") {
		t.Error("the messages do not say what to do")
	}
}

// A channel Discord answers with 5xx again and again is tried again with
// a growing pause in the same run, and reported incomplete until it
// passes (issue 24.8).
func TestChannelFailingWith5xxIsRetried(t *testing.T) {
	e := setup(t, func(d *discordtest.Discord) {
		d.Fault("GET", "/channels/2001/messages", 502, 12) // five tries a request: two skips
		d.Fault("GET", "/channels/2002/messages", 500, 1_000_000)
	})
	h := history()
	e.waitStored("#staff after its 5xx", h[252], h[253])
	waitFor(t, "the thread reported incomplete", func() bool {
		st, _ := api.ReadBotStatus(e.cfg.SpoolDir)
		return st != nil && len(st.Incomplete) == 1 && st.Incomplete[0].Channel == thread && st.Incomplete[0].Retrying
	})
	if n := strings.Count(e.log.String(), "trying again later"); n < 3 {
		t.Errorf("%d retries logged", n)
	}
}

// Deleted threads and channels, and a guild the bot was removed from,
// stop being served (issue 23.3).
func TestDeletedChannelsAreForgotten(t *testing.T) {
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	e.discord.DeleteChannel(thread)
	waitFor(t, "the deleted thread forgotten", func() bool { return !e.stored(h[254].ID) })
	e.discord.DeleteChannel(staff)
	waitFor(t, "the deleted channel forgotten", func() bool { return !e.stored(h[252].ID) && !e.stored(h[253].ID) })
	if !e.stored(h[250].ID) {
		t.Fatal("a channel that still exists was forgotten")
	}
	r, err := e.c.Search(context.Background(), map[string][]string{"q": {"budget"}, "mode": {"lexical"}})
	if err != nil || len(r.Results) != 0 {
		t.Errorf("a deleted channel's text is still found: %+v, %v", r, err)
	}
	e.discord.RemoveBot()
	waitFor(t, "the guild forgotten", func() bool {
		st, err := e.c.Stats(context.Background())
		return err == nil && st.Messages == 0
	})
}

// A channel or thread deleted while the bot could not hear of it is
// forgotten. Discord sends no CHANNEL_DELETE of an unavailable guild,
// and one sent while the session was lost is gone with it; the
// GUILD_CREATE that follows just lacks the channel. arikawa's state
// never drops what a GUILD_CREATE leaves out, so the channel stayed
// known: the catch-up skipped it, members kept searching it (audit 13).
func TestChannelDeletedUnheardIsForgotten(t *testing.T) {
	outage := func(ch discord.ChannelID) func(e *env) {
		return func(e *env) {
			e.discord.GuildOutage()
			time.Sleep(300 * time.Millisecond)
			e.discord.DeleteChannelUnseen(ch)
			e.discord.GuildBack()
		}
	}
	for _, tc := range []struct {
		name   string
		ch     discord.ChannelID
		delete func(e *env)
		quoted string // what alice's answer quotes of it while it exists
	}{
		{"during a guild outage", staff, outage(staff), "boiler budget approved"},
		{"a thread during a guild outage", thread, outage(thread), "lighthouse trip saturday"},
		{"while the session was lost", staff, func(e *env) {
			e.discord.Offline(true)
			e.discord.RefuseResume()
			e.discord.DeleteChannelUnseen(staff) // its CHANNEL_DELETE went with the session
			e.discord.Offline(false)
			e.discord.WaitSessions(2, 0)
		}, "boiler budget approved"},
		{"and then caught up", staff, func(e *env) {
			e.discord.DeleteChannelUnseen(staff) // its CHANNEL_DELETE lost
			e.bot.Backfill()                     // SIGHUP: the page fetch answers 404 Unknown Channel
		}, "boiler budget approved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			e.backfilled(int64(len(history())))
			var inIt []discord.Message
			for _, m := range history() {
				if m.ChannelID == tc.ch {
					inIt = append(inIt, m)
				}
			}
			link := fmt.Sprintf("/%d/%d/", guildID, tc.ch)
			if _, edit, _ := e.interaction(alice, 2, query(tc.quoted)); !strings.Contains(embedText(edit), link) {
				t.Fatalf("the answer before the deletion does not quote %s: %s", link, embedText(edit))
			}
			tc.delete(e)
			waitFor(t, "the guild's catch-up", func() bool { return strings.Count(e.log.String(), "backfill: guild done") >= 2 })
			time.Sleep(2 * time.Second) // a forget is flushed at once
			if n := len(inIt) - e.unstored(inIt); n > 0 {
				t.Errorf("%d of %d messages of a channel deleted %s are still stored", n, len(inIt), tc.name)
			}
			if _, edit, _ := e.interaction(alice, 2, query(tc.quoted)); strings.Contains(embedText(edit), link) {
				t.Errorf("an answer after the channel was deleted %s still quotes it: %s", tc.name, embedText(edit))
			}
		})
	}
}

// dsearch-bot --reconcile pages through whole histories: an edit and a
// deletion far back, and a thread deleted while the bot was away, are
// fixed; cut short, it resumes from the page it reached (issues 24.9,
// 23.3).
func TestFullReconciliationResumes(t *testing.T) {
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.discord.Remove(general, h[10].ID) // far older than any catch-up's window
	edited := h[20]
	edited.Content, edited.EditedTimestamp = "an old message, edited years later", discord.NewTimestamp(t0.Add(500*24*time.Hour))
	e.discord.Replace(edited)
	e.discord.DeleteChannel(thread) // no bot connected: its THREAD_DELETE is never seen

	// The second page of #general fails (five tries): the run stops there.
	e.discord.FaultAfter("GET", "/channels/2000/messages", 500, 1, 5)
	var out strings.Builder
	err := Reconcile(context.Background(), e.cfg, &out)
	if err == nil || !strings.Contains(err.Error(), "run dsearch-bot --reconcile again") {
		t.Fatalf("a reconciliation cut short: %v\n%s", err, &out)
	}
	if e.stored(h[254].ID) {
		t.Error("the thread deleted while the bot was away is still served")
	}
	pages := len(e.discord.Calls("GET", "/channels/2000/messages"))
	staffPages := len(e.discord.Calls("GET", "/channels/2001/messages"))
	out.Reset()
	if err := Reconcile(context.Background(), e.cfg, &out); err != nil {
		t.Fatalf("the resumed reconciliation: %v\n%s", err, &out)
	}
	resumed := e.discord.Calls("GET", "/channels/2000/messages")[pages:]
	if !strings.Contains(out.String(), "resuming") || len(resumed) == 0 || resumed[0].Query.Get("before") == "" {
		t.Errorf("the second run did not resume from its page: %v\n%s", resumed, &out)
	}
	if n := len(e.discord.Calls("GET", "/channels/2001/messages")); n != staffPages {
		t.Errorf("the second run paged #staff again (%d requests, %d before)", n, staffPages)
	}
	if e.stored(h[10].ID) || e.content(edited.ID) != edited.Content || !e.stored(h[11].ID) {
		t.Errorf("after reconciling: deleted stored %v, edit %q, neighbour stored %v", e.stored(h[10].ID), e.content(edited.ID), e.stored(h[11].ID))
	}
	if _, err := os.Stat(filepath.Join(e.cfg.SpoolDir, progressFile)); !os.IsNotExist(err) {
		t.Errorf("the progress file stays after a whole reconciliation: %v", err)
	}
}

// unstored counts the messages searchd does not hold.
func (e *env) unstored(msgs []discord.Message) int {
	n := 0
	for _, m := range msgs {
		if !e.stored(m.ID) {
			n++
		}
	}
	return n
}

// restartedAndDone starts the bot again and waits until it logged a
// "backfill: guild done" of its own (the run before may have been
// stopped before it logged one).
func (e *env) restartedAndDone() {
	e.t.Helper()
	from := len(e.log.String())
	e.start()
	waitFor(e.t, "the guild's backfill", func() bool { return strings.Contains(e.log.String()[from:], "backfill: guild done") })
	time.Sleep(500 * time.Millisecond)
}

// A channel empty at its first sync has a complete checkpoint and no
// stored message. If its mark is not on disk (a crash between the
// checkpoint's PUT and the marks' save, a failed save, an upgrade from
// before marks), the catch-up pages it from its start: it took it for a
// channel never synced and fetched its newest page only, its history
// pass already complete, and lost what was older.
func TestEmptyChannelWithoutMarkGetsItsHistory(t *testing.T) {
	const quiet = 2050
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(discord.Channel{ID: quiet, Type: discord.GuildText, Name: "quiet", ParentID: category})
	})
	e.backfilled(int64(len(history())))
	waitFor(t, "#quiet's checkpoint", func() bool {
		cp, err := e.c.Backfill(context.Background(), api.ID(quiet))
		return err == nil && cp.Complete
	})
	waitFor(t, "#quiet's mark", func() bool { _, ok := e.bot.marks.mark(quiet); return ok })
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	// The marks file as a crash before its save (or a failed save) left it.
	path := filepath.Join(e.cfg.SpoolDir, marksFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var saved map[string]json.RawMessage
	var through map[string]json.RawMessage
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(saved["through"], &through); err != nil {
		t.Fatal(err)
	}
	delete(through, "2050")
	saved["through"], _ = json.Marshal(through)
	data, _ = json.Marshal(saved)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	missed := series(quiet, t0.Add(300*24*time.Hour), 150, "said in the quiet channel while the bot was down")
	e.discord.AddHistory(missed...)
	e.restartedAndDone()
	if n := e.unstored(missed); n > 0 {
		t.Errorf("%d of %d messages of a channel empty at its first sync, written while the bot was down, never stored", n, len(missed))
	}
}
