package export

import (
	"strings"
	"testing"
)

// A forwarded message, as the exporter writes it, carries the forward's
// files, link previews and stickers beside its text: a forwarded photo
// or link is found by its name or title, as an attachment of the message
// itself is.
func TestForwardedFilesLinksAndStickersKept(t *testing.T) {
	in := `{"guild": {"id": "1", "name": "g"}, "channel": {"id": "2", "type": "GuildTextChat", "name": "general"},
 "dateRange": {"after": null, "before": null}, "exportedAt": "2025-01-02T00:00:00+00:00", "messages": [
 {"id": "10", "type": "Default", "timestamp": "2025-01-01T00:00:00+00:00", "timestampEdited": null, "content": "",
  "author": {"id": "4", "name": "a", "nickname": "A", "isBot": false}, "attachments": [], "embeds": [], "stickers": [], "mentions": [],
  "reference": {"type": "Forward", "messageId": "9", "channelId": "3", "guildId": "1"},
  "forwardedMessage": {"timestamp": "2024-12-31T00:00:00+00:00", "timestampEdited": null, "content": "look at this",
   "attachments": [{"id": "7", "url": "u", "fileName": "receipt.jpg", "fileSizeBytes": 10}],
   "embeds": [{"title": "Zebra facts", "url": "http://x", "timestamp": null, "description": "all about zebras", "images": [], "fields": [], "inlineEmojis": []}],
   "stickers": [{"id": "8", "name": "Wave", "format": "Png", "sourceUrl": "s"}]}}
 ], "messageCount": 1}`
	_, msgs, err := ReadAll(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	want := "look at this\n📎 receipt.jpg\n[sticker: Wave]\n🔗 Zebra facts — all about zebras"
	if m := msgs[0]; m.Content != want || m.ReplyToID != 0 {
		t.Errorf("forward: reply %d, content %q; want %q", m.ReplyToID, m.Content, want)
	}
}
