package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"dsearch/shared/api"
)

// A catch-up shows a page of conversations, the newest. When more were
// held since the time asked, it says so: a member catching up on a busy
// week must not take the page for all that was said. Until a time, it
// shows that stretch.
func TestCatchupSaysWhenOlderConversationsAreLeftOut(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	start := t0.Add(100 * 24 * time.Hour)
	var last api.ID
	for i := range 14 { // a day apart: a conversation each
		m := message(general, user(bob, "bob"), start.Add(time.Duration(i)*24*time.Hour), fmt.Sprintf("day %d news", i))
		e.discord.Dispatch("MESSAGE_CREATE", m)
		last = api.ID(m.ID)
	}
	waitFor(t, "the new messages", func() bool { _, err := e.c.Message(context.Background(), last, 0, 0); return err == nil })
	since := start.Format("2006-01-02")
	for _, c := range []struct {
		since, until string
		more         bool
		shown        int // conversations shown; 0: any
	}{
		{since, "", true, 10},
		{start.Add(10 * 24 * time.Hour).Format("2006-01-02"), "", false, 4},
		// Until a day: days 0 to 4, none left out.
		{since, start.Add(4 * 24 * time.Hour).Format("2006-01-02"), false, 5},
	} {
		opts := []map[string]any{{"name": "since", "type": 3, "value": c.since}}
		if c.until != "" {
			opts = append(opts, map[string]any{"name": "until", "type": 3, "value": c.until})
		}
		_, edit, _ := e.interaction(bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1, "options": opts})
		var embeds []struct {
			Description string `json:"description"`
			Fields      []any  `json:"fields"`
		}
		b, _ := json.Marshal(edit["embeds"])
		json.Unmarshal(b, &embeds)
		if len(embeds) != 1 {
			t.Fatalf("catch-up since %s: %v", c.since, edit)
		}
		said := strings.Contains(embeds[0].Description, "Only the 10 newest conversations are shown")
		if said != c.more || len(embeds[0].Fields) != c.shown ||
			(c.until != "" && !strings.Contains(embeds[0].Description, " to "+c.until)) {
			t.Errorf("catch-up since %s until %q: %d conversations shown (want %d), %q; want the note %v", c.since, c.until, len(embeds[0].Fields), c.shown, embeds[0].Description, c.more)
		}
	}
}
