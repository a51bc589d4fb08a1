package bot

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/spool"
	"dsearch/shared/api"
)

// refuseBatch is searchd refusing, every time, any batch that holds
// message id, with err.
type refuseBatch struct {
	Searchd
	id  api.ID
	err error
}

func (r refuseBatch) PostMessages(ctx context.Context, mb *api.MessageBatch) (*api.BatchResult, error) {
	if slices.ContainsFunc(mb.Messages, func(m api.MessageUpsert) bool { return m.ID == r.id }) {
		return nil, r.err
	}
	return r.Searchd.PostMessages(ctx, mb)
}

// rejectedText is the text of SPOOL/rejected/'s batches, one string.
func (e *env) rejectedText() string {
	e.t.Helper()
	paths, err := spool.Rejected(e.cfg.SpoolDir)
	if err != nil {
		e.t.Fatal(err)
	}
	var all strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			e.t.Fatal(err)
		}
		all.Write(data)
	}
	return all.String()
}

// A deletion waiting in one batch with a message searchd refuses as bad
// went to SPOOL/rejected/ with it, whole: the deleted message stayed
// stored and served until someone ran --replay-rejected, and no
// catch-up finds the deletion of a message older than its page. The
// refused batch is offered again in halves: the deletion reaches
// searchd, and rejected/ keeps the bad message alone.
func TestDeletionBatchedWithARefusedMessageReachesSearchd(t *testing.T) {
	e := setup(t, func(c *Config) { c.FlushEvery = time.Hour }) // one batch, flushed below
	h := history()
	e.backfilled(int64(len(h)))
	bad := message(general, user(alice, "alice"), t0.Add(300*24*time.Hour), "zq-4412 searchd refuses this one")
	deleted := h[5]
	b, _, _, _ := e.restartHolding(0, func(b *Bot) {
		b.searchd = refuseBatch{Searchd: b.searchd, id: api.ID(bad.ID),
			err: &api.Error{Status: 400, Message: "messages[0]: content is not valid UTF-8", Code: api.CodeBadBatch}}
	})
	e.discord.Post(bad)
	e.discord.Delete(general, deleted.ID)
	waitFor(t, "the message and the deletion waiting together", func() bool {
		b.batch.mu.Lock()
		defer b.batch.mu.Unlock()
		return len(b.batch.pending.Messages) == 1 && len(b.batch.pending.Deletes) == 1
	})
	b.batch.flush()
	waitFor(t, "the spool empty", func() bool { return b.spool.Len() == 0 })
	if e.stored(deleted.ID) {
		t.Error("a message deleted on Discord is still stored: its deletion went to SPOOL/rejected/ with a bad message batched beside it")
	}
	rej := e.rejectedText()
	if !strings.Contains(rej, "zq-4412") {
		t.Errorf("the refused message is not kept in SPOOL/rejected/: %s", rej)
	}
	var left api.MessageBatch
	if paths, _ := spool.Rejected(e.cfg.SpoolDir); len(paths) == 1 {
		data, _ := os.ReadFile(paths[0])
		json.Unmarshal(data, &left)
	}
	if left.Items() != 1 {
		t.Errorf("SPOOL/rejected/ keeps %d items, want the refused message alone: %s", left.Items(), rej)
	}
}

// A batch searchd refuses every time without calling it bad (a 500, say
// for one message its database cannot store) held every later batch back
// in the spool, and with them every catch-up, for as long as it lasted:
// what members wrote meanwhile was missed. Once searchd takes the batch
// behind it, it is set aside in SPOOL/rejected/ (dsearch-bot --check
// fails), and the rest goes on.
func TestBatchSearchdKeepsRefusingHoldsNothingBackForGood(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	stuck := message(general, user(alice, "alice"), t0.Add(300*24*time.Hour), "zq-5521 searchd cannot store this one")
	after := message(general, user(bob, "bob"), t0.Add(300*24*time.Hour+time.Minute), "written after the refused one")
	b, _, done, before := e.restartHolding(0, func(b *Bot) {
		b.searchd = refuseBatch{Searchd: b.searchd, id: api.ID(stuck.ID), err: &api.Error{Status: 500, Message: "internal error"}}
		b.spool.SetAsideAfter, b.spool.SetAsideAge = 3, time.Nanosecond
	})
	defer func() {
		if t.Failed() {
			t.Log(e.log.String())
		}
	}()
	e.discord.Post(stuck)
	waitFor(t, "the refused message spooled", func() bool { return len(e.spoolHolding("zq-5521")) > 0 })
	e.discord.Post(after)
	b.Backfill()
	waitFor(t, "the catch-up done", func() bool { return done() > before })
	waitFor(t, "the spool empty", func() bool { return b.spool.Len() == 0 })
	if !e.stored(after.ID) {
		t.Error("the message written after the refused one is not stored")
	}
	if !strings.Contains(e.rejectedText(), "zq-5521") {
		t.Error("the refused message is not kept in SPOOL/rejected/")
	}
	if !strings.Contains(e.log.String(), "searchd refused part of a batch") {
		t.Error("no warning says a batch was set aside")
	}
	if strings.Contains(e.log.String(), "zq-5521") {
		t.Error("the log holds the refused message's text")
	}
}

// refuseThenDelete is searchd refusing as bad any batch that holds
// message id; the first time, before it answers, the message is deleted
// on Discord and searchd takes the deletion (meanwhile is called, and
// returns once it has).
type refuseThenDelete struct {
	Searchd
	id        api.ID
	meanwhile func()
	once      *sync.Once
}

func (r refuseThenDelete) PostMessages(ctx context.Context, mb *api.MessageBatch) (*api.BatchResult, error) {
	if slices.ContainsFunc(mb.Messages, func(m api.MessageUpsert) bool { return m.ID == r.id }) {
		r.once.Do(r.meanwhile)
		return nil, &api.Error{Status: 400, Message: "messages[0]: content is not valid UTF-8", Code: api.CodeBadBatch}
	}
	return r.Searchd.PostMessages(ctx, mb)
}

// A catch-up's page holds a message searchd refuses alone; the message
// is deleted on Discord, and searchd takes the deletion, while the page
// is sent in parts. The deletion cleaned SPOOL/rejected/ before the
// refused message was written there, and its text stayed on disk. What
// searchd removes while a refused batch is split is taken out of what it
// leaves in rejected/.
func TestDeletedWhileItsRefusedPageIsSplitLeavesRejected(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	bad := message(general, user(alice, "alice"), t0.Add(300*24*time.Hour), "zq-6604 refused and deleted meanwhile")
	var once sync.Once
	var b *Bot
	b, _, done, before := e.restartHolding(0, func(bot *Bot) {
		bot.searchd = refuseThenDelete{Searchd: bot.searchd, id: api.ID(bad.ID), once: &once, meanwhile: func() {
			last := b.spool.Last()
			e.discord.Delete(general, bad.ID)
			waitFor(t, "the deletion taken", func() bool {
				return b.spool.Last() > last && b.spool.Delivered(b.spool.Last())
			})
		}}
	})
	e.discord.AddHistory(bad) // written while the bot was away: the catch-up's page brings it
	b.Backfill()
	waitFor(t, "the catch-up done", func() bool { return done() > before })
	if strings.Contains(e.rejectedText(), "zq-6604") {
		t.Error("SPOOL/rejected/ keeps the text of a message deleted on Discord, its deletion taken by searchd")
	}
}

// refusingSearchd refuses every batch as bad.
type refusingSearchd struct{ Searchd }

func (refusingSearchd) PostMessages(context.Context, *api.MessageBatch) (*api.BatchResult, error) {
	return nil, &api.Error{Status: 400, Message: "messages[0]: content is not valid UTF-8", Code: api.CodeBadBatch}
}

// dsearch-bot --reconcile has no spool (the running bot's is not its
// own): a page searchd refuses is an error there, as before, not a
// crash on a spool it lacks.
func TestReconcileWithoutASpoolReportsARefusedPage(t *testing.T) {
	b := &Bot{log: slog.New(slog.NewTextHandler(io.Discard, nil)), searchd: refusingSearchd{}}
	err := b.postPage(context.Background(), &api.MessageBatch{Messages: []api.MessageUpsert{{ID: 1, ChannelID: 2}}})
	if !api.BadBatch(err) {
		t.Errorf("postPage without a spool: %v, want the refusal", err)
	}
}

// An edit searchd refuses on its own waits in SPOOL/rejected/ for a
// person and --replay-rejected; the version before it stayed stored and
// served until then, with whatever the member edited away. searchd now
// drops that older version (the bot asks, with its check of the refused
// batches, at once after a set-aside), without a tombstone: the replay
// of the edit still stores it.
func TestRefusedEditLeavesTheOlderTextUnserved(t *testing.T) {
	e := setup(t, func(c *Config) { c.AnswerCheckEvery = time.Hour })
	h := history()
	e.backfilled(int64(len(h)))
	m := h[10]
	e.restartHolding(0, func(b *Bot) {
		b.searchd = refuseBatch{Searchd: b.searchd, id: api.ID(m.ID),
			err: &api.Error{Status: 400, Message: "messages[0]: content is not valid UTF-8", Code: api.CodeBadBatch}}
	})
	old := m.Content
	if e.content(m.ID) != old {
		t.Fatalf("before the edit, searchd holds %q", e.content(m.ID))
	}
	m.Content = "zq-the words after the edit"
	m.EditedTimestamp = discord.NewTimestamp(m.Timestamp.Time().Add(time.Hour))
	e.discord.Edit(m)
	waitFor(t, "the edit set aside", func() bool { return strings.Contains(e.rejectedText(), "zq-the words after the edit") })
	waitFor(t, "the older text no longer served", func() bool { return !e.stored(m.ID) })
	// The replay stores the edit: no tombstone stops it.
	var refused api.MessageBatch
	if paths, _ := spool.Rejected(e.cfg.SpoolDir); len(paths) == 1 {
		data, _ := os.ReadFile(paths[0])
		json.Unmarshal(data, &refused)
	}
	if res, err := e.c.PostMessages(context.Background(), &refused); err != nil || res.Inserted != 1 {
		t.Fatalf("the replay of the refused edit: %+v, %v", res, err)
	}
	if got := e.content(m.ID); got != "zq-the words after the edit" {
		t.Errorf("after the replay, searchd holds %q", got)
	}
}
