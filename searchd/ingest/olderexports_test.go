package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// dceExport writes a DiscordChatExporter JSON export the way
// JsonMessageWriter does (guild, channel with categoryId/category,
// dateRange, exportedAt, messages, messageCount).
func dceExport(guildID, guildName, chID, chType, catID, catName, chName, exportedAt string, msgs ...string) []byte {
	cat := "null"
	catN := "null"
	if catID != "" {
		cat, catN = fmt.Sprintf("%q", catID), fmt.Sprintf("%q", catName)
	}
	return []byte(fmt.Sprintf(`{
  "guild": {"id": %q, "name": %q, "iconUrl": ""},
  "channel": {"id": %q, "type": %q, "categoryId": %s, "category": %s, "name": %q, "topic": null},
  "dateRange": {"after": null, "before": null},
  "exportedAt": %q,
  "messages": [
%s
  ],
  "messageCount": %d
}`, guildID, guildName, chID, chType, cat, catN, chName, exportedAt, strings.Join(msgs, ",\n"), len(msgs)))
}

// dceMessage is one message as the exporter writes it; extra, when not
// empty, replaces the empty attachments/embeds/stickers arrays.
func dceMessage(id, ts, content, extra string) string {
	if extra == "" {
		extra = `"attachments": [], "embeds": [], "stickers": []`
	}
	return fmt.Sprintf(`    {"id": %q, "type": "Default", "timestamp": %q, "timestampEdited": null, "callEndedTimestamp": null,
     "isPinned": false, "content": %q,
     "author": {"id": "990000000000001001", "name": "minji", "discriminator": "0000", "nickname": "민지", "color": null, "isBot": false, "roles": [], "avatarUrl": ""},
     %s, "reactions": [], "mentions": [], "inlineEmojis": []}`, id, ts, content, extra)
}

func rawDB(t *testing.T, im *Importer) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", im.DB.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// The newest evidence of a name stays whatever the order of the files
// (design.md): an older export of another channel of the server, found in
// an old folder and imported in a later run, does not rename the server
// back, also in a database from before guilds' export times were kept.
func TestOlderExportOfAnotherChannelKeepsGuildName(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		dir := t.TempDir()
		newer := dceExport("990000000000000001", "Study Group", "990000000000000010", "GuildTextChat", "", "", "general",
			"2025-06-02T10:00:00+09:00", dceMessage("990000000000000100", "2025-05-01T09:00:00+09:00", "hello", ""))
		older := dceExport("990000000000000001", "Old Name Club", "990000000000000011", "GuildTextChat", "", "", "random",
			"2023-01-02T10:00:00+09:00", dceMessage("990000000000000200", "2022-12-01T09:00:00+09:00", "old times", ""))
		write(t, filepath.Join(dir, "newer.json"), newer)
		write(t, filepath.Join(dir, "older.json"), older)
		im := newImporter(t)
		ctx := context.Background()
		for _, f := range []string{"newer.json", "older.json"} { // two runs, the older export last
			if legacy {
				if _, err := rawDB(t, im).Exec(`DELETE FROM meta WHERE key LIKE 'named_at:%'`); err != nil {
					t.Fatal(err)
				}
			}
			if r := im.ImportFile(ctx, filepath.Join(dir, f)); r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		var name string
		if err := rawDB(t, im).QueryRow(`SELECT name FROM guilds WHERE id = 990000000000000001`).Scan(&name); err != nil {
			t.Fatal(err)
		}
		if name != "Study Group" {
			t.Errorf("legacy %v: guild name %q: an export from 2023 replaced the name a 2025 export gave", legacy, name)
		}
	}
}

// A thread's export names its parent channel in categoryId/category (the
// exporter's schema predates threads), a channel's export its category:
// an older one, imported in a later run, renames neither, though the
// thread or channel itself was never imported before.
func TestOlderThreadExportKeepsParentChannelName(t *testing.T) {
	dir := t.TempDir()
	channel := dceExport("990000000000000001", "Study Group", "990000000000000010", "GuildTextChat", "990000000000000005", "Study", "general",
		"2025-06-02T10:00:00+09:00", dceMessage("990000000000000100", "2025-05-01T09:00:00+09:00", "hello", ""))
	thread := dceExport("990000000000000001", "Study Group", "990000000000000020", "GuildPublicThread", "990000000000000010", "old-general", "a thread",
		"2023-01-02T10:00:00+09:00", dceMessage("990000000000000300", "2022-12-01T09:00:00+09:00", "in the thread", ""))
	other := dceExport("990000000000000001", "Study Group", "990000000000000011", "GuildTextChat", "990000000000000005", "Old Category", "random",
		"2023-01-02T10:00:00+09:00", dceMessage("990000000000000200", "2022-12-01T09:00:00+09:00", "old times", ""))
	write(t, filepath.Join(dir, "channel.json"), channel)
	write(t, filepath.Join(dir, "thread.json"), thread)
	write(t, filepath.Join(dir, "other.json"), other)
	im := newImporter(t)
	ctx := context.Background()
	for _, f := range []string{"channel.json", "thread.json", "other.json"} {
		if r := im.ImportFile(ctx, filepath.Join(dir, f)); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	for id, want := range map[int64]string{990000000000000010: "general", 990000000000000005: "Study", 990000000000000020: "a thread"} {
		var name string
		if err := rawDB(t, im).QueryRow(`SELECT name FROM channels WHERE id = ?`, id).Scan(&name); err != nil {
			t.Fatal(err)
		}
		if name != want {
			t.Errorf("channel %d named %q, want %q: a 2023 export renamed what a 2025 export named", id, name, want)
		}
	}
}

// "A message whose timestamp or ID cannot be read is passed over and
// counted (the first named), the rest of its file imported" (design.md),
// also one of valid JSON of the wrong type (an ID written as a number by
// another tool or a hand repair), and it is not called a file cut short.
func TestMessageOfWrongJSONTypeIsPassedOver(t *testing.T) {
	dir := t.TempDir()
	bad := strings.Replace(dceMessage("990000000000000101", "2025-05-01T09:01:00+09:00", "second", ""),
		`"id": "990000000000000101"`, `"id": 990000000000000101`, 1)
	write(t, filepath.Join(dir, "x.json"), dceExport("990000000000000001", "Study Group", "990000000000000010", "GuildTextChat", "", "", "general",
		"2025-05-02T10:00:00+09:00",
		dceMessage("990000000000000100", "2025-05-01T09:00:00+09:00", "first", ""), bad,
		dceMessage("990000000000000102", "2025-05-01T09:02:00+09:00", "third", "")))
	r := newImporter(t).ImportFile(context.Background(), filepath.Join(dir, "x.json"))
	if r.Err != nil || r.Inserted != 2 || r.Invalid != 1 {
		t.Errorf("result: err %v, inserted %d, invalid %d; want the two readable messages imported and one counted invalid", r.Err, r.Inserted, r.Invalid)
	}
	if r.FirstInvalid == nil || strings.Contains(r.FirstInvalid.Error(), "cut short") {
		t.Errorf("first invalid: %v", r.FirstInvalid)
	}
}

// messageCount is only a cross-check: written as a string it is read,
// and no value of it fails the file after its last message (which lost
// the file's last batch, here all of it).
func TestMessageCountOfAnotherTypeIsOnlyUnknown(t *testing.T) {
	for value, want := range map[string]int64{`"1"`: 1, `{"n": 1}`: -1, `null`: -1} {
		dir := t.TempDir()
		b := dceExport("990000000000000001", "Study Group", "990000000000000010", "GuildTextChat", "", "", "general",
			"2025-05-02T10:00:00+09:00", dceMessage("990000000000000100", "2025-05-01T09:00:00+09:00", "first", ""))
		b = []byte(strings.Replace(string(b), `"messageCount": 1`, `"messageCount": `+value, 1))
		write(t, filepath.Join(dir, "x.json"), b)
		r := newImporter(t).ImportFile(context.Background(), filepath.Join(dir, "x.json"))
		if r.Err != nil || r.Inserted != 1 || r.Count != want {
			t.Errorf("messageCount %s: err %v, inserted %d, count %d; want the message imported and the count %d", value, r.Err, r.Inserted, r.Count, want)
		}
	}
}

// A message deleted on Discord is absent from a newer export of its
// channel without a date range. The import cannot tell a deletion from a
// filter the JSON does not record, and a wrong deletion is for good: it
// deletes nothing, and counts what the export lacks from before it was
// made (not what was posted after it).
func TestFullExportReportsStoredMessagesItLacks(t *testing.T) {
	dir := t.TempDir()
	m1 := dceMessage("990000000000000100", "2025-05-01T09:00:00+09:00", "first", "")
	m2 := dceMessage("990000000000000101", "2025-05-01T09:01:00+09:00", "my home address is 12 Secret Lane", "")
	m3 := dceMessage("990000000000000102", "2025-05-01T09:02:00+09:00", "third", "")
	later := dceMessage("990000000000000900", "2025-07-01T09:00:00+09:00", "after the June export", "")
	general := func(at string, msgs ...string) []byte {
		return dceExport("990000000000000001", "Study Group", "990000000000000010", "GuildTextChat", "", "", "general", at, msgs...)
	}
	write(t, filepath.Join(dir, "may.json"), general("2025-05-02T10:00:00+09:00", m1, m2, m3))
	// An export with a date range holds only its range: nothing to count.
	ranged := strings.Replace(string(general("2025-07-02T10:00:00+09:00", later)), `"after": null`, `"after": "2025-06-30T00:00:00+09:00"`, 1)
	write(t, filepath.Join(dir, "july.json"), []byte(ranged))
	write(t, filepath.Join(dir, "june.json"), general("2025-06-02T10:00:00+09:00", m1, m3))
	im := newImporter(t)
	ctx := context.Background()
	want := map[string]int64{"may.json": 0, "july.json": 0, "june.json": 1}
	for _, f := range []string{"may.json", "july.json", "june.json"} {
		r := im.ImportFile(ctx, filepath.Join(dir, f))
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if r.NotInExport != want[f] || r.Channel.Name != "general" {
			t.Errorf("%s: %d stored messages of #%s not in it, want %d", f, r.NotInExport, r.Channel.Name, want[f])
		}
	}
	var n int
	if err := rawDB(t, im).QueryRow(`SELECT COUNT(*) FROM messages WHERE id = 990000000000000101`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("an import deleted a message its export lacks")
	}
}
