package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// A deleted message's word that was the first on a page of the keyword
// index leaves the file too: FTS5's secure-delete takes the word off the
// page but leaves the page's key in messages_fts_idx (a prefix of the
// word, here all its distinguishing part), so a purge writes the index
// anew (rewriteKeywords; 'optimize' alone leaves a one-segment index as
// it is).
func TestDeletedWordLeavesNoLeafKeyInTheFile(t *testing.T) {
	db := openTest(t)
	dir := filepath.Dir(db.path)
	ctx := context.Background()
	var batch []searchd.Message
	for i := int64(1); i <= 3000; i++ {
		m := msg(i, time.Duration(i)*time.Second, 0)
		m.Content = fmt.Sprintf("secret%05dpassphrase hello", i)
		batch = append(batch, m)
	}
	apply(t, db, batch...)
	// The leaf keys naming one message's word in full (secretNNNNN).
	rows, err := db.db.Query(`SELECT CAST(term AS TEXT) FROM messages_fts_idx`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var words []string
	for rows.Next() {
		var term string
		if err := rows.Scan(&term); err != nil {
			t.Fatal(err)
		}
		if w := strings.TrimPrefix(term, "0"); len(w) == len("secret00000") && strings.HasPrefix(w, "secret") {
			id, _ := strconv.ParseInt(strings.TrimPrefix(w, "secret"), 10, 64)
			ids, words = append(ids, id), append(words, w)
		}
	}
	rows.Close()
	if len(ids) == 0 {
		t.Fatal("no leaf key names a whole word; the index's pages changed size?")
	}
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: ids}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PurgeDeleted(ctx, true); err != nil {
		t.Fatal(err)
	}
	if got := fileHolds(t, dir, words...); got != "" {
		t.Errorf("messages %v deleted and purged, yet %s", ids, got)
	}
}

// A channel deleted on Discord leaves the files with its name and topic
// (ForgetDeletedChannels removes its row) even when it held no stored
// message: no text changed, yet serve's next purge empties the WAL,
// which held the row's page as it was (textTakenOut).
func TestDeletedChannelsNameLeavesTheFile(t *testing.T) {
	db := openTest(t)
	dir := filepath.Dir(db.path)
	ctx := context.Background()
	apply(t, db, msg(1, time.Second, 0))
	if _, err := db.Apply(ctx, &searchd.Batch{Channels: []searchd.Channel{{ID: 300, GuildID: 1, Name: "zqx-layoff-planning",
		Kind: "GuildText", Topic: "Zqxtopic: who goes in March"}}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PurgeDeleted(ctx, true); err != nil { // all in the file, the WAL empty
		t.Fatal(err)
	}
	if _, err := db.ForgetDeletedChannels(ctx, []int64{300}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PurgeDeleted(ctx, false); err != nil { // searchd serve's, seconds later or every minute
		t.Fatal(err)
	}
	if got := fileHolds(t, dir, "zqx-layoff-planning", "Zqxtopic"); got != "" {
		t.Errorf("channel deleted and purged, yet %s", got)
	}
}

// A WAL a crash left behind is emptied by the first purge after the
// database is opened again: what the crashed process took out without
// counting it (a forgotten channel's name) is there too.
func TestWALLeftByACrashIsEmptiedByTheFirstPurge(t *testing.T) {
	db := openTest(t)
	dir := filepath.Dir(db.path)
	ctx := context.Background()
	apply(t, db, msg(1, time.Second, 0))
	if _, err := db.Apply(ctx, &searchd.Batch{Channels: []searchd.Channel{{ID: 300, GuildID: 1, Name: "zqx-crash-planning", Kind: "GuildText"}}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PurgeDeleted(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ForgetDeletedChannels(ctx, []int64{300}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	// The crash: the files as they are now, before any purge.
	crashed := filepath.Join(t.TempDir(), "crashed")
	if err := os.Mkdir(crashed, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileName, FileName + "-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(crashed, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if fileHolds(t, crashed, "zqx-crash-planning") == "" {
		t.Fatal("the crashed files do not hold the name: the test tests nothing")
	}
	again, err := Open(ctx, crashed)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := again.PurgeDeleted(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := fileHolds(t, crashed, "zqx-crash-planning"); got != "" {
		t.Errorf("after the first purge: %s", got)
	}
}

// An import's progress was kept by the export's path, and
// DiscordChatExporter names a file by its server, category and channel
// ("Server - Category - channel [ID].json"): a deleted channel's name, or
// a left server's, stayed in the file with its checkpoint, after its row
// and every message went. The progress is kept under a digest of the path.
func TestImportPathLeavesNoChannelNameInTheFile(t *testing.T) {
	db := openTest(t)
	dir := filepath.Dir(db.path)
	ctx := context.Background()
	path := "/home/me/exports/Zqx Guild - Text Channels - zqx-layoff-planning [300].json"
	m := msg(1, time.Second, 0)
	m.ChannelID = 300
	b := &searchd.Batch{Guilds: []searchd.Guild{{ID: 1, Name: "Zqx Guild"}},
		Channels: []searchd.Channel{{ID: 300, GuildID: 1, Name: "zqx-layoff-planning", Kind: "GuildTextChat"}}, Messages: []searchd.Message{m}}
	cp := &Checkpoint{Path: path, Size: 10, MTime: 20, MessagesDone: 1, Complete: true, Channel: 300, ExportedAt: 1, Guild: 1}
	if _, err := db.Apply(ctx, b, segment.DefaultRules, cp); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ImportState(ctx, path); err != nil || got == nil || !got.Complete || got.Size != 10 || got.MTime != 20 || got.Path != path {
		t.Fatalf("the import's state: %+v, %v", got, err)
	}
	if _, err := db.PurgeDeleted(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ForgetLeftGuild(ctx, 1, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ForgetDeletedChannels(ctx, []int64{300}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PurgeDeleted(ctx, true); err != nil {
		t.Fatal(err)
	}
	if got := fileHolds(t, dir, "zqx-layoff-planning", "Zqx Guild"); got != "" {
		t.Errorf("channel deleted, server left, and purged, yet %s", got)
	}
}

// The digest an import's progress is kept under confirms a guessed path,
// names and all, to whoever holds the file: it leaves with its channel,
// with a thread's parent, and with its server; and an export of them
// imported again (the operator's `searchd import` of the same folder)
// stores nothing and keeps no progress either.
func TestImportProgressLeavesWithItsChannelAndServer(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		forget func(db *DB) error
	}{
		{"channel deleted", func(db *DB) error {
			_, err := db.ForgetDeletedChannels(ctx, []int64{300}, segment.DefaultRules)
			return err
		}},
		{"server left", func(db *DB) error { _, err := db.ForgetLeftGuild(ctx, 1, segment.DefaultRules); return err }},
	} {
		db := openTest(t)
		paths := map[int64]string{300: "/x/Zqx Guild - Text Channels - zqx-layoff-planning [300].json", 301: "/x/Zqx Guild - zqx-layoff-planning - a thread [301].json"}
		chans := map[int64]searchd.Channel{300: {ID: 300, GuildID: 1, Name: "zqx-layoff-planning", Kind: "GuildTextChat"},
			301: {ID: 301, GuildID: 1, ParentID: 300, Name: "a thread", Kind: "GuildPublicThread"}}
		imp := func() {
			for ch, path := range paths {
				m := msg(ch, time.Second, 0)
				m.ChannelID = ch
				b := &searchd.Batch{Guilds: []searchd.Guild{{ID: 1, Name: "Zqx Guild"}}, Channels: []searchd.Channel{chans[ch]}, Messages: []searchd.Message{m}}
				cp := &Checkpoint{Path: path, Size: 10, MTime: 20, MessagesDone: 1, Complete: true, Channel: ch, ExportedAt: 1, Guild: 1, Parent: chans[ch].ParentID}
				if _, err := db.ApplyImport(ctx, []Part{{Batch: b, Checkpoint: cp}}, segment.DefaultRules); err != nil {
					t.Fatal(err)
				}
			}
		}
		progressGone := func(when string) {
			for _, path := range paths {
				if got, err := db.ImportState(ctx, path); err != nil || got != nil {
					t.Errorf("%s, %s: the progress of %s stays: %+v, %v", c.name, when, path, got, err)
				}
			}
		}
		imp()
		if err := c.forget(db); err != nil {
			t.Fatal(err)
		}
		progressGone("forgotten")
		imp()
		progressGone("imported again")
	}
}

// Progress an older searchd kept under the plain path is put under its
// digest at open: a resumed import still finds it, and the path (with
// the names in it) leaves the file.
func TestImportPathKeptPlainIsHashedAtOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	path := "/home/me/exports/Zqx Guild - zqx-layoff-planning [300].json"
	if _, err := db.db.ExecContext(ctx, `INSERT INTO imports (path, size, mtime, messages_done, complete, updated_at) VALUES (?, 10, 20, 7, 0, 1)`, path); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(ctx, dir); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, err := db.ImportState(ctx, path); err != nil || got == nil || got.MessagesDone != 7 || got.Size != 10 || got.MTime != 20 || got.Complete {
		t.Fatalf("the import's state after the upgrade: %+v, %v", got, err)
	}
	if _, err := db.PurgeDeleted(ctx, true); err != nil {
		t.Fatal(err)
	}
	if got := fileHolds(t, dir, "zqx-layoff-planning"); got != "" {
		t.Errorf("after the upgrade, %s", got)
	}
}

// Progress an older searchd kept under the plain path names its channel
// there ("… [300].json"): put under its digest at open, it leaves with the
// channel all the same, and at once where the channel was deleted before.
func TestImportProgressKeptPlainLeavesWithItsChannel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	paths := map[int64]string{300: "/home/me/exports/Zqx Guild - zqx-layoff-planning [300].json", 301: "/home/me/exports/Zqx Guild - zqx-old-plans [301].json"}
	for _, p := range paths {
		if _, err := db.db.ExecContext(ctx, `INSERT INTO imports (path, size, mtime, messages_done, complete, updated_at) VALUES (?, 10, 20, 7, 1, 1)`, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.db.ExecContext(ctx, `INSERT INTO deleted_channels (channel_id, deleted_at) VALUES (301, 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(ctx, dir); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, err := db.ImportState(ctx, paths[301]); err != nil || got != nil {
		t.Errorf("a deleted channel's progress kept at the upgrade: %+v, %v", got, err)
	}
	if got, err := db.ImportState(ctx, paths[300]); err != nil || got == nil {
		t.Fatalf("the progress lost at the upgrade: %+v, %v", got, err)
	}
	if _, err := db.ForgetDeletedChannels(ctx, []int64{300}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ImportState(ctx, paths[300]); err != nil || got != nil {
		t.Errorf("the progress stays after its channel's deletion: %+v, %v", got, err)
	}
}
