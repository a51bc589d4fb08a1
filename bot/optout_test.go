package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// buttons lists a reply's button custom IDs.
func buttons(edit map[string]any) []string {
	b, _ := json.Marshal(edit["components"])
	var rows []struct {
		Components []struct {
			CustomID string `json:"custom_id"`
		} `json:"components"`
	}
	json.Unmarshal(b, &rows)
	var out []string
	for _, r := range rows {
		for _, c := range r.Components {
			out = append(out, c.CustomID)
		}
	}
	return out
}

// A member opts out with /optout and its confirmation: their messages are
// forgotten and stay so through backfill, what they post is not indexed,
// nobody's answer shows or names them; /optin lets new messages in.
func TestOptOut(t *testing.T) {
	e := setup(t)
	total := int64(len(history()))
	e.backfilled(total)
	ctx := context.Background()
	var bobs []discord.Message
	for _, m := range history() {
		if m.Author.ID == bob {
			bobs = append(bobs, m)
		}
	}
	optout := map[string]any{"id": "9010", "name": "optout", "type": 1}

	// The prompt is private and asks first; only bob may answer it.
	cb, edit, _ := e.interaction(bob, 2, optout)
	if cb["data"].(map[string]any)["flags"] != 64.0 || !strings.Contains(fmt.Sprint(edit["content"]), "cannot be brought back") {
		t.Fatalf("the prompt: %v %v", cb, edit)
	}
	choices := buttons(edit)
	if len(choices) != 2 {
		t.Fatalf("the prompt's buttons: %v", choices)
	}
	yes, no := choices[0], choices[1]
	if cb, _, _ := e.interaction(alice, 3, map[string]any{"custom_id": yes, "component_type": 2}); cb["type"] != 4.0 ||
		!strings.Contains(fmt.Sprint(cb["data"]), "Only the member who asked") {
		t.Errorf("alice confirmed bob's opt-out: %v", cb)
	}
	_, edit, _ = e.interaction(bob, 3, map[string]any{"custom_id": no, "component_type": 2})
	if !strings.Contains(fmt.Sprint(edit["content"]), "Nothing changed") || len(buttons(edit)) != 0 {
		t.Errorf("cancel: %v", edit)
	}
	if st, _ := e.c.Stats(ctx); st.Messages != total {
		t.Fatalf("cancel forgot something: %d messages", st.Messages)
	}

	// A batch searchd refused earlier holds one of his messages.
	rejected := filepath.Join(e.cfg.SpoolDir, "rejected", "00000000000000000099.json")
	kept, _ := json.Marshal(api.MessageBatch{Messages: []api.MessageUpsert{
		{ID: 990, ChannelID: api.ID(general), Author: api.Author{ID: api.ID(bob), Username: "bob"}, Content: "bob's refused words"},
		{ID: 991, ChannelID: api.ID(general), Author: api.Author{ID: api.ID(alice), Username: "alice"}, Content: "alice's refused words"}}})
	if err := os.WriteFile(rejected, kept, 0o600); err != nil {
		t.Fatal(err)
	}

	// Confirmed: bob's messages are gone.
	_, edit, _ = e.interaction(bob, 2, optout)
	_, edit, _ = e.interaction(bob, 3, map[string]any{"custom_id": buttons(edit)[0], "component_type": 2})
	if want := fmt.Sprintf("forgot %d of your messages", len(bobs)); !strings.Contains(fmt.Sprint(edit["content"]), want) || len(buttons(edit)) != 0 {
		t.Errorf("confirmed: %v, want %q", edit, want)
	}
	for _, m := range bobs {
		if _, err := e.c.Message(ctx, api.ID(m.ID), 0, 0); err == nil {
			t.Errorf("bob's message %d is still served", m.ID)
		}
	}
	if data, _ := os.ReadFile(rejected); strings.Contains(string(data), "bob's") || !strings.Contains(string(data), "alice's") {
		t.Errorf("the rejected batch after he opted out: %s", data)
	}
	// Nobody's answer shows or names him.
	_, edit, _ = e.interaction(alice, 2, query("what did bob say about the boiler and the plumber?"))
	if text := embedText(edit); strings.Contains(text, "Bob") || strings.Contains(text, "<@602>") || strings.Contains(text, "plumber says") {
		t.Errorf("alice's answer shows bob after he opted out: %s", text)
	}
	// A new message of his is not indexed; alice's, sent after it, is.
	his := message(general, user(bob, "bob"), t0.Add(400*24*time.Hour), "bob's new words")
	hers := message(general, user(alice, "alice"), t0.Add(400*24*time.Hour+time.Minute), "alice's new words")
	e.discord.Dispatch("MESSAGE_CREATE", his)
	e.discord.Dispatch("MESSAGE_CREATE", hers)
	waitFor(t, "alice's message", func() bool { _, err := e.c.Message(ctx, api.ID(hers.ID), 0, 0); return err == nil })
	if _, err := e.c.Message(ctx, api.ID(his.ID), 0, 0); err == nil {
		t.Error("bob's new message was indexed after he opted out")
	}
	// A backfill from the start does not bring his history back.
	if err := e.c.SetBackfill(ctx, &api.Backfill{Channel: general}); err != nil {
		t.Fatal(err)
	}
	ch, _ := e.bot.state.Channel(general)
	if _, err := e.bot.history(ctx, *ch); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.c.Stats(ctx); st.Messages != total-int64(len(bobs))+1 {
		t.Errorf("after a fresh backfill: %d messages, want %d", st.Messages, total-int64(len(bobs))+1)
	}

	// The way back: what he posts from now on is indexed.
	_, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9011", "name": "optin", "type": 1})
	if !strings.Contains(fmt.Sprint(edit["content"]), "from now on") {
		t.Errorf("optin: %v", edit)
	}
	back := message(general, user(bob, "bob"), t0.Add(401*24*time.Hour), "bob is back")
	e.discord.Dispatch("MESSAGE_CREATE", back)
	waitFor(t, "bob's message after opting in", func() bool { _, err := e.c.Message(ctx, api.ID(back.ID), 0, 0); return err == nil })
	if _, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9011", "name": "optin", "type": 1}); !strings.Contains(fmt.Sprint(edit["content"]), "not opted out") {
		t.Errorf("optin twice: %v", edit)
	}
	// The log has counts, never who.
	// As a value (key=602), not inside a timestamp (…47.602Z).
	if log := e.log.String(); regexp.MustCompile(`=602\b`).MatchString(log) {
		t.Errorf("the bot's log names who opted out:\n%s", log)
	}
}

// A member who opts out while batches wait in the spool (searchd back
// but slow to take them, or a long queue ahead) has their text taken out
// of the waiting batches at once, not left on disk until searchd takes
// them: Bot.took cleans them (forgetWaitingAuthors). The removal refactor
// (4b47509) had dropped the only call that did (audit13b-gone).
func TestOptOutTakesTheMembersTextOutOfTheWaitingSpool(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	first := message(general, user(alice, "alice"), t0.Add(300*24*time.Hour), "alice's message searchd is slow to take")
	b, release, _, _ := e.restartHolding(first.ID, nil)
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

	if _, err := b.optOut(context.Background(), bob, optOutConfirm, 0); err != nil {
		t.Fatal(err)
	}
	if holding := e.spoolHolding("zq-5521"); len(holding) > 0 {
		t.Errorf("bob opted out; his text stays in the waiting spool: %v", holding)
	}
}
