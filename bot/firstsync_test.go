package bot

import (
	"fmt"
	"strings"
	"testing"

	"dsearch/bot/discordtest"
)

// A member's first /query while the bot is still paging a channel's
// history must not read as if the history had been searched: "Nothing
// relevant was found" (or a few of the newest messages) is misleading
// while older messages are not stored yet. The reply says how many of
// the channels searched are not fully synced, in the member's language;
// a channel whose history is all stored gets no such note.
func TestFirstQueryWhileHistorySyncsSaysSo(t *testing.T) {
	e := setup(t, func(d *discordtest.Discord) {
		// #general's newest page (its catch-up) comes; every page of its
		// history fails, so its first sync never ends in this test.
		d.FaultAfter("GET", fmt.Sprintf("/channels/%d/messages", general), 500, 1, 1<<30)
	})
	waitFor(t, "#general's history to fail", func() bool {
		return strings.Contains(e.log.String(), "backfill: channel failed")
	})

	_, edit, _ := e.interaction(bob, 2, query("small talk number 3 about the weather"))
	if got := embedText(edit); !strings.Contains(got, "not fully synced yet") {
		t.Errorf("first /query while #general's history is still paged: %s\nwant a note that the history is not fully synced", got)
	}
	e.locale = "ko"
	_, edit, _ = e.interaction(bob, 2, query("날씨"))
	if got := embedText(edit); !strings.Contains(got, "아직") {
		t.Errorf("Korean member: %s\nwant the note in Korean", got)
	}
	e.locale = ""
	_, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{{"name": "since", "type": 3, "value": "2025-01-01"}}})
	if got := embedText(edit); !strings.Contains(got, "not fully synced yet") {
		t.Errorf("/catchup in #general while its history is still paged: %s\nwant the note", got)
	}

	// #staff was synced whole: no note.
	_, edit, _ = e.interaction(alice, 2, query("boiler budget", map[string]any{"name": "channel", "type": 7, "value": fmt.Sprint(staff)}))
	if got := embedText(edit); strings.Contains(got, "not fully synced") {
		t.Errorf("/query in a channel synced whole: %s\nwant no note", got)
	}
}
