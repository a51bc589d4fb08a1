package bot

import (
	"context"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

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
