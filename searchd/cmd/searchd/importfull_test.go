package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An export without a date range that lacks a stored message of its
// channel from before it was made is reported, and nothing is deleted.
func TestImportReportsStoredMessagesAFullExportLacks(t *testing.T) {
	dir := t.TempDir()
	export := func(name, at string, ids ...int) {
		var msgs []string
		for _, id := range ids {
			msgs = append(msgs, fmt.Sprintf(`{"id": "%d", "type": "Default", "timestamp": "2025-05-01T09:0%d:00+09:00", "content": "message %d",
  "author": {"id": "990000000000001001", "name": "minji", "isBot": false}, "attachments": [], "embeds": [], "stickers": []}`, id, id%10, id))
		}
		b := fmt.Sprintf(`{"guild": {"id": "990000000000000001", "name": "Study Group"},
 "channel": {"id": "990000000000000010", "type": "GuildTextChat", "categoryId": null, "category": null, "name": "general", "topic": null},
 "dateRange": {"after": null, "before": null}, "exportedAt": %q,
 "messages": [%s], "messageCount": %d}`, at, strings.Join(msgs, ",\n"), len(ids))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	export("may.json", "2025-05-02T10:00:00+09:00", 990000000000000100, 990000000000000101, 990000000000000102)
	export("june.json", "2025-06-02T10:00:00+09:00", 990000000000000100, 990000000000000102)
	data := filepath.Join(dir, "data")
	if out, err := run(t, "import", "--data", data, filepath.Join(dir, "may.json")); err != nil || strings.Contains(out, "full export") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	out, err := run(t, "import", "--data", data, filepath.Join(dir, "june.json"))
	if err != nil || !strings.Contains(out, "1 message stored of #general is not in this full export") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	if out, err := run(t, "stats", "--data", data); err != nil || !strings.Contains(out, "messages 3") {
		t.Fatalf("stats: %v\n%s", err, out)
	}
}
