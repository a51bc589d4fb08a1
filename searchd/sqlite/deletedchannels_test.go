package sqlite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// A channel deleted on Discord is forgotten for good: its messages, a
// thread of it searchd never saw, and its row (name, topic) do not come
// back from a later batch (a page fetched before the deletion, an older
// export), and other channels are untouched. A channel forgotten because
// the bot left its server (Forget) takes messages again.
func TestDeletedChannelsStayDeleted(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	const guild, parent, thread, other = 1, 100, 101, 200
	in := func(ch int64, id int64) searchd.Message {
		m := msg(id, time.Duration(id)*time.Minute, 0)
		m.ChannelID = ch
		return m
	}
	places := []searchd.Channel{{ID: parent, GuildID: guild, Name: "secret-plans", Kind: "GuildTextChat", Topic: "the surprise"},
		{ID: other, GuildID: guild, Name: "general", Kind: "GuildTextChat"}}
	if _, err := db.Apply(ctx, &searchd.Batch{Guilds: []searchd.Guild{{ID: guild}}, Channels: places,
		Messages: []searchd.Message{in(parent, 1), in(other, 2)}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := db.ForgetDeletedChannels(ctx, []int64{parent}, segment.DefaultRules); err != nil || n != 1 {
		t.Fatalf("forget: %d, %v", n, err)
	}
	// As the server's toBatch builds it: the thread described, then a
	// placeholder entry (no parent) for each message's channel.
	late := &searchd.Batch{Channels: append(places, searchd.Channel{ID: thread, GuildID: guild, ParentID: parent, Kind: "GuildPublicThread", Name: "plans thread"},
		searchd.Channel{ID: parent}, searchd.Channel{ID: thread}, searchd.Channel{ID: other}),
		Messages: []searchd.Message{in(parent, 3), in(thread, 4), in(other, 5)}}
	res, err := db.Apply(ctx, late, segment.DefaultRules, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 2 || res.Inserted != 1 {
		t.Errorf("a page of the deleted channel and its thread after the deletion: %+v, want 2 skipped, 1 inserted", res)
	}
	for _, id := range []int64{1, 3, 4} {
		if _, err := db.Message(ctx, id); err != ErrNotFound {
			t.Errorf("message %d of the deleted channel: %v", id, err)
		}
	}
	if ids, err := db.ChannelsOf(ctx, guild, 0); err != nil || !slices.Equal(ids, []int64{other}) {
		t.Errorf("the guild's channels: %v, %v; want the deleted one's row gone", ids, err)
	}
	// A deleted category's channels outlive it, on Discord and here.
	const category, under = 400, 401
	if _, err := db.Apply(ctx, &searchd.Batch{Channels: []searchd.Channel{{ID: category, GuildID: guild, Kind: "GuildCategory"},
		{ID: under, GuildID: guild, ParentID: category, Kind: "GuildTextChat"}}, Messages: []searchd.Message{in(under, 20)}},
		segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ForgetDeletedChannels(ctx, []int64{category}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if res := apply(t, db, in(under, 21)); res.Inserted != 1 {
		t.Errorf("a channel of a deleted category: %+v, want it stored", res)
	}
	// Left, not deleted: the server may add the bot again.
	if _, err := db.Forget(ctx, ForgetFilter{Channel: other}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if res := apply(t, db, in(other, 6)); res.Inserted != 1 {
		t.Errorf("a channel forgotten but not deleted takes new messages: %+v", res)
	}
	checkSegments(t, db)
}

// What is deleted is gone from the files too: neither a deleted message's
// text nor its words in the keyword index can be read back from the
// database's bytes (its WAL included, while it is open), once purged: at
// once for an opt-out, within a minute under searchd serve for a deletion
// or an edit that takes words out. Purging is only a checkpoint: the
// keyword index drops the words in the write that deletes them.
func TestDeletedTextLeavesNoTraceInTheFile(t *testing.T) {
	db := openTest(t)
	dir := filepath.Dir(db.path)
	ctx := context.Background()
	secret := func(id int64, author int64, word string) searchd.Message {
		m := msg(id, time.Duration(id)*time.Minute, 0)
		m.Author.ID, m.Content = author, word+" told only to you, kangaroo 비밀번호는"
		return m
	}
	var batch []searchd.Message
	for i := int64(1); i <= 200; i++ { // enough to fill pages of their own
		batch = append(batch, msg(1000+i, time.Duration(i)*time.Second, 0))
	}
	batch = append(batch, secret(1, 9, "Zqxoptedout"), secret(2, 1, "Zqxdeleted"), secret(3, 1, "Zqxedited"))
	apply(t, db, batch...)
	for i := int64(1); i <= 30; i++ { // the index's later segments
		apply(t, db, msg(2000+i, time.Hour+time.Duration(i)*time.Second, 0))
	}
	leftIn := func(when string, words ...string) {
		t.Helper()
		if held := fileHolds(t, dir, words...); held != "" {
			t.Errorf("%s: %s", when, held)
		}
	}
	if _, err := db.OptOut(ctx, 9, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	leftIn("after an opt-out", "zqxoptedout", "Zqxoptedout", "optedout")
	if purged, err := db.PurgeDeleted(ctx, false); err != nil || purged {
		t.Errorf("an opt-out left its purge to later: %v, %v", purged, err)
	}
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{2}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	edit := msg(3, 3*time.Minute, 0)
	edit.Author.ID, edit.Content = 1, "nothing to see here"
	edit.EditedAt = t0.Add(4 * time.Minute).UnixMicro()
	apply(t, db, edit)
	if purged, err := db.PurgeDeleted(ctx, false); err != nil || !purged { // searchd serve's, every minute
		t.Fatalf("purge after a deletion: %v, %v", purged, err)
	}
	leftIn("after a deletion and an edit", "zqxdeleted", "Zqxdeleted", "zqxedited", "Zqxedited", "kangaroo", "비밀번호는", "비밀")
	apply(t, db, msg(3000, 2*time.Hour, 0)) // a new message takes nothing out
	if purged, err := db.PurgeDeleted(ctx, false); err != nil || purged {
		t.Errorf("purge with nothing deleted since: %v, %v; want nothing done", purged, err)
	}
}

// A backup made after a deletion and before serve's next purge holds no
// trace of it either: VACUUM INTO copies the keyword index as it is, and
// the copy is purged.
func TestBackupLeavesDeletedTextOut(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	var batch []searchd.Message
	for i := int64(1); i <= 200; i++ {
		batch = append(batch, msg(1000+i, time.Duration(i)*time.Second, 0))
	}
	gone := msg(1, time.Hour, 0)
	gone.Content = "Zqxbackedup told only to you"
	apply(t, db, append(batch, gone)...)
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{1}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "backup.db")
	if err := db.Backup(ctx, path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(bytes.ToLower(b), []byte("zqxbackedup")) {
		t.Error("the backup holds the deleted message's words")
	}
}
