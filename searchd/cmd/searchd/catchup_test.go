package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// searchd catchup prints a page of conversations, the newest; when older
// ones since --since were left out, it says so instead of passing the
// page off as all that was said.
func TestCatchupSaysWhenOlderConversationsAreLeftOut(t *testing.T) {
	dir := shortTemp(t)
	data := filepath.Join(dir, "data")
	var msgs []string
	start := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 24 { // a day apart: a conversation each
		at := start.Add(time.Duration(i) * 24 * time.Hour)
		id := (at.UnixMilli()-1420070400000)<<22 + int64(i)
		msgs = append(msgs, fmt.Sprintf(`{"id": "%d", "type": "Default", "timestamp": %q, "timestampEdited": null, "content": "day %d news",
 "author": {"id": "880000000000001001", "name": "minji", "nickname": null, "isBot": false}, "attachments": [], "embeds": [], "stickers": [], "mentions": []}`,
			id, at.Format(time.RFC3339), i))
	}
	writeFile(t, filepath.Join(dir, "x", "general.json"), []byte(fmt.Sprintf(`{"guild": {"id": "880000000000000001", "name": "Study Group"},
 "channel": {"id": "880000000000000010", "type": "GuildTextChat", "categoryId": null, "category": null, "name": "general", "topic": null},
 "dateRange": {"after": null, "before": null}, "exportedAt": "2025-04-01T00:00:00Z", "messages": [%s], "messageCount": 24}`, strings.Join(msgs, ",\n"))))
	if out, err := run(t, "import", "--data", data, filepath.Join(dir, "x")); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "run", "s.sock")
	startServe(t, sock, "--data", data)
	for _, c := range []struct {
		since string
		more  bool
	}{{"2025-03-01", true}, {"2025-03-10", false}} {
		out, err := run(t, "catchup", "--data", data, "--socket", sock, "--channel", "general", "--since", c.since)
		lines := strings.Count(out, "conversation ")
		said := strings.Contains(out, "only the 20 newest conversations are shown")
		if err != nil || said != c.more || lines > 20 {
			t.Errorf("catchup --since %s: %v, %d conversations, the note %v (want %v)\n%s", c.since, err, lines, said, c.more, out)
		}
	}
}
