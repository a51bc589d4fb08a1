package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// A member who opts out while batches wait in the spool (searchd back
// but slow to take them, or a long queue ahead) keeps their text in the
// waiting batch on disk until it is delivered: the opt-out cleans only
// rejected/ (Bot.took), and Spool.ForgetAuthor, which commit 6e5e10f made
// clean the waiting batches too, is no longer called by anyone since the
// removal refactor (4b47509) took optout.go's call out (audit13b).
func TestOptOutTakesTheMembersTextOutOfTheWaitingSpool(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	done := func() int { return strings.Count(e.log.String(), "backfill: guild done") }
	before := done()
	first := message(general, user(alice, "alice"), t0.Add(300*24*time.Hour), "alice's message searchd is slow to take")
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	b, err := New(ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.searchd = holdBatch{Searchd: b.searchd, id: api.ID(first.ID), release: release}
	e.bot, e.cancel, e.done = b, cancel, make(chan error, 1)
	go func() { e.done <- b.Run(ctx) }()
	waitFor(t, "the catch-up on start", func() bool { return done() > before })
	defer func() {
		close(release)
		waitFor(t, "the spool empty", func() bool { return b.spool.Len() == 0 })
	}()

	e.discord.Post(first)
	waitFor(t, "alice's message spooled", func() bool { return b.spool.Len() > 0 })
	time.Sleep(300 * time.Millisecond) // a batch of its own, on its way to searchd
	his := message(general, user(bob, "bob"), t0.Add(300*24*time.Hour+time.Minute), "bob's zq-5521 words he takes back")
	e.discord.Post(his)
	waitFor(t, "bob's message spooled", func() bool { return len(e.spoolHolding("zq-5521")) > 0 })

	if _, err := b.optOut(ctx, bob, optOutConfirm, 0); err != nil {
		t.Fatal(err)
	}
	if holding := e.spoolHolding("zq-5521"); len(holding) > 0 {
		t.Errorf("bob opted out; his text stays in the waiting spool: %v", holding)
	}
}

// An edit another process hands searchd (dsearch-bot --reconcile posts
// the edits it finds straight to it, edits winning by their edit time)
// takes quoted text out as surely as the bot's own edit does, which
// withdraws the answer (removal.changed); but POST /v1/gone reports only
// messages no longer stored, so the public answer keeps showing the old
// text for good (audit13b, on 9f8ab93).
func TestPublicAnswerWithdrawnAfterAnEditByAnotherProcess(t *testing.T) {
	e := setup(t, checkedOften)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "lighthouse trip", "lighthouse trip on saturday")
	m := historyMessage(t, "lighthouse trip on saturday?")
	m.Content, m.EditedTimestamp = "never mind, plans changed", discord.NewTimestamp(m.Timestamp.Time().Add(time.Hour))
	if _, err := e.c.PostMessages(context.Background(), &api.MessageBatch{Messages: []api.MessageUpsert{upsert(&m, nil)}}); err != nil {
		t.Fatal(err)
	}
	if got := e.content(m.ID); got != m.Content {
		t.Fatalf("searchd holds %q after the edit", got)
	}
	e.withdrawn(token)
}
