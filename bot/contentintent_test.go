package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
)

// With the Message Content intent switched off in the Developer Portal
// (a newcomer's missed step 2, or switched off later), Discord serves
// every member's message over REST with no text. `dsearch-bot
// --reconcile` identified with the Guilds intent alone, so Discord did
// not refuse it: it stored a message missed while the bot was away as
// an empty one and took an edit made meanwhile without its text, and
// said nothing. It must stop before sending anything, naming the fix.
func TestReconcileWithoutTheMessageContentIntentStoresNothing(t *testing.T) {
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	missed := message(general, user(bob, "bob"), t0.Add(60*24*time.Hour), "a message posted while the bot was away")
	e.discord.AddHistory(missed)
	edited := h[30]
	edited.Content, edited.EditedTimestamp = "an old message, edited while the bot was away", discord.NewTimestamp(t0.Add(61*24*time.Hour))
	e.discord.Replace(edited)
	e.discord.MessageContentIntentOff()

	var out strings.Builder
	err := Reconcile(context.Background(), e.cfg, &out)
	if err == nil || !strings.Contains(err.Error(), "Message Content") {
		t.Errorf("--reconcile without the Message Content intent: %v\n%s\nwant it refused, naming the intent", err, &out)
	}
	if e.stored(missed.ID) {
		t.Errorf("the missed message was stored as %q", e.content(missed.ID))
	}
	if got := e.content(edited.ID); got != h[30].Content {
		t.Errorf("the edited message is stored as %q; want its text kept until it can be read", got)
	}
}
