package bot

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// checkedOften makes the bot ask searchd what its answers quote that is
// gone every 100 ms, not every 5 minutes.
func checkedOften(c *Config) { c.AnswerCheckEvery = 100 * time.Millisecond }

// An operator's searchd forget --author, run beside the bot, withdraws
// the public answers quoting that member: the bot never sees it happen.
func TestPublicAnswerWithdrawnAfterSearchdForgetAuthor(t *testing.T) {
	e := setup(t, checkedOften)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke) // bob's words
	out, err := exec.Command(e.sd.bin, "forget", "--data", e.sd.data, "--author", api.ID(bob).String()).CombinedOutput()
	if err != nil {
		t.Fatalf("searchd forget --author: %v: %s", err, out)
	}
	e.withdrawn(token)
}

// An opt-out made on searchd's socket (PUT /v1/optouts), not through the
// bot's /optout, withdraws the answers quoting the member.
func TestPublicAnswerWithdrawnAfterAnOptOutOnSearchdsSocket(t *testing.T) {
	e := setup(t, checkedOften)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke)
	if _, err := e.c.OptOut(context.Background(), api.ID(bob)); err != nil {
		t.Fatal(err)
	}
	e.withdrawn(token)
}

// A deletion another process hands searchd (dsearch-bot --reconcile
// posts straight to it) withdraws the answer quoting the message; an
// answer quoting nothing removed stays.
func TestPublicAnswerWithdrawnAfterADeletionByAnotherProcess(t *testing.T) {
	e := setup(t, checkedOften)
	e.backfilled(int64(len(history())))
	kept := e.publicAnswer(general, "boiler broke", boilerBroke)
	token := e.publicAnswer(general, "lighthouse trip", "lighthouse trip on saturday")
	before, _ := e.discord.ReplyTo(kept)
	if strings.Contains(before.Embeds, "lighthouse") {
		t.Fatalf("the answer meant to stay quotes the message the test deletes: %s", before.Embeds)
	}
	m := historyMessage(t, "lighthouse trip on saturday?")
	if _, err := e.c.PostMessages(context.Background(), &api.MessageBatch{Deletes: []api.ID{api.ID(m.ID)}}); err != nil {
		t.Fatal(err)
	}
	e.withdrawn(token)
	time.Sleep(300 * time.Millisecond) // checks after the one that withdrew it
	if after, _ := e.discord.ReplyTo(kept); after != before {
		t.Errorf("an answer quoting nothing removed changed: %+v", after)
	}
}

// A removal made while the bot was stopped, which no catch-up can see
// (an opt-out on searchd's socket), withdraws the answer at the next
// start, without waiting for the periodic check.
func TestPublicAnswerWithdrawnAtStartForAnOptOutWhileTheBotWasStopped(t *testing.T) {
	e := setup(t, func(c *Config) { c.AnswerCheckEvery = time.Hour })
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke)
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.OptOut(context.Background(), api.ID(bob)); err != nil {
		t.Fatal(err)
	}
	e.start()
	e.withdrawn(token)
}

// An edit another process hands searchd (dsearch-bot --reconcile posts
// the edits it finds straight to it, an import, a restore) takes quoted
// text out as surely as the bot's own edit does (removal.changed): the
// answer quoting the older version is withdrawn (POST /v1/gone's quoted
// versions), even though the edit was made on Discord before the answer
// (found later). An answer quoting a message already edited when it was
// made stays (audit13b-gone).
func TestPublicAnswerWithdrawnAfterAnEditByAnotherProcess(t *testing.T) {
	e := setup(t, checkedOften)
	e.backfilled(int64(len(history())))
	ctx := context.Background()
	boiler := historyMessage(t, boilerBroke)
	boiler.Content, boiler.EditedTimestamp = boilerBroke+", again", discord.NewTimestamp(boiler.Timestamp.Time().Add(time.Hour))
	if _, err := e.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{upsert(&boiler, nil)}}); err != nil {
		t.Fatal(err)
	}
	kept := e.publicAnswer(general, "boiler broke", boilerBroke+", again")
	token := e.publicAnswer(general, "lighthouse trip", "lighthouse trip on saturday")
	before, _ := e.discord.ReplyTo(kept)
	if strings.Contains(before.Embeds, "lighthouse") {
		t.Fatalf("the answer meant to stay quotes the message the test edits: %s", before.Embeds)
	}
	m := historyMessage(t, "lighthouse trip on saturday?")
	m.Content, m.EditedTimestamp = "never mind, plans changed", discord.NewTimestamp(m.Timestamp.Time().Add(time.Hour))
	if _, err := e.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{upsert(&m, nil)}}); err != nil {
		t.Fatal(err)
	}
	if got := e.content(m.ID); got != m.Content {
		t.Fatalf("searchd holds %q after the edit", got)
	}
	e.withdrawn(token)
	time.Sleep(300 * time.Millisecond) // checks after the one that withdrew it
	if after, _ := e.discord.ReplyTo(kept); after != before {
		t.Errorf("an answer quoting a message as edited before it was made changed: %+v", after)
	}
}
