package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// fileHolds reports the first of words the database's files hold.
func fileHolds(t *testing.T, dir string, words ...string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, FileName+"*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range words {
			if bytes.Contains(b, []byte(w)) {
				return filepath.Base(f) + " holds " + w
			}
		}
	}
	return ""
}

// channelWithSecret stores a channel of n messages, one of them holding a
// word no other message holds.
func channelWithSecret(t *testing.T, db *DB, channel int64, n int) {
	t.Helper()
	var batch []searchd.Message
	for i := 1; i <= n; i++ {
		m := msg(channel*100000+int64(i), time.Duration(i)*time.Second, 0)
		m.ChannelID = channel
		if i == n/2 {
			m.Content = "Zqxbulksecret in the middle"
		}
		batch = append(batch, m)
	}
	apply(t, db, batch...)
}

// A forget too large for secure-delete's message-by-message removal
// (bulkForget) leaves no word of what it forgot in the file either: it
// merges the keyword index at its end.
func TestBulkForgetLeavesNoTrace(t *testing.T) {
	db := openTest(t)
	dir := filepath.Dir(db.path)
	ctx := context.Background()
	channelWithSecret(t, db, 7, bulkForget+100)
	if held := fileHolds(t, dir, "zqxbulksecret"); held == "" {
		t.Fatal("the secret was never in the file: the test tests nothing")
	}
	if n, err := db.Forget(ctx, ForgetFilter{Channel: 7}, segment.DefaultRules); err != nil || n != bulkForget+100 {
		t.Fatalf("forgot %d, %v", n, err)
	}
	if _, err := db.PurgeDeleted(ctx, true); err != nil {
		t.Fatal(err)
	}
	if held := fileHolds(t, dir, "zqxbulksecret", "Zqxbulksecret"); held != "" {
		t.Errorf("after forgetting the channel: %s", held)
	}
	if v, _ := db.Meta(ctx, "keywords_unmerged"); v != "" {
		t.Errorf("the bulk forget left the keyword index marked unmerged")
	}
	var secure int
	if err := db.db.QueryRowContext(ctx, `SELECT v FROM messages_fts_config WHERE k = 'secure-delete'`).Scan(&secure); err != nil || secure != 1 {
		t.Errorf("secure-delete after a bulk forget: %d, %v; want 1", secure, err)
	}
}

// A bulk forget cut short (secure-delete off, the index unmerged) is
// merged when the database is next opened.
func TestBulkForgetCutShortIsMergedAtOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	channelWithSecret(t, db, 7, 200)
	if err := db.write(ctx, func(tx *sql.Tx) error { return unmergeKeywords(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{7*100000 + 100}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if held := fileHolds(t, dir, "zqxbulksecret"); held == "" {
		t.Fatal("an unmerged deletion left nothing: the test tests nothing")
	}
	db, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, _ := db.Meta(ctx, "keywords_unmerged"); v != "" {
		t.Errorf("opening left the keyword index unmerged")
	}
	if _, err := db.PurgeDeleted(ctx, true); err != nil {
		t.Fatal(err)
	}
	if held := fileHolds(t, dir, "zqxbulksecret", "Zqxbulksecret"); held != "" {
		t.Errorf("after reopening: %s", held)
	}
}

// Under searchd serve a deletion leaves the files (the WAL's older pages)
// a moment after its write, not at the purge's next tick.
func TestDeletionLeavesTheWALSoon(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	channelWithSecret(t, db, 7, 200)
	if _, err := db.PurgeDeleted(ctx, true); err != nil { // the insert's pages out of the WAL
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		db.PurgeEvery(ctx, time.Hour, func(err error) { t.Error(err) })
	}()
	defer func() { cancel(); <-done }()
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{7*100000 + 100}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if held := fileHolds(t, dir, "zqxbulksecret", "Zqxbulksecret"); held == "" {
		t.Fatal("the WAL held nothing of the deleted message: the test tests nothing")
	}
	for deadline := time.Now().Add(10 * purgeSoon); ; time.Sleep(100 * time.Millisecond) {
		held := fileHolds(t, dir, "zqxbulksecret", "Zqxbulksecret")
		if held == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %v after the deletion", held, 10*purgeSoon)
		}
	}
}

// A backup made while a bulk forget runs holds none of the words it has
// forgotten so far: the copy's keyword index is merged.
func TestBackupDuringBulkForgetLeavesNoTrace(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	channelWithSecret(t, db, 7, 200)
	if err := db.write(ctx, func(tx *sql.Tx) error { return unmergeKeywords(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{7*100000 + 100}}, segment.DefaultRules, nil); err != nil {
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
	if bytes.Contains(b, []byte("zqxbulksecret")) {
		t.Error("the backup holds the forgotten message's words")
	}
	var secure int
	if err := db.db.QueryRowContext(ctx, `SELECT v FROM messages_fts_config WHERE k = 'secure-delete'`).Scan(&secure); err != nil || secure != 0 {
		t.Errorf("the live database's secure-delete changed under its bulk forget: %d, %v", secure, err)
	}
}

// A purge while a bulk forget runs (searchd serve purges two seconds
// after each of its chunks' writes, and an opt-out at once) leaves
// secure-delete off and the keyword index to the forget's end: turning
// secure-delete back on made the rest of the forget take each message's
// words out one by one (110 s for 81,250 messages instead of 31 s). Once
// the forget is over, a purge merges what it left.
func TestPurgeDuringBulkForgetLeavesItsKeywordIndexAlone(t *testing.T) {
	db := openTest(t)
	dir := filepath.Dir(db.path)
	ctx := context.Background()
	channelWithSecret(t, db, 7, 200)
	end, err := db.startBulkForget(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{7*100000 + 100}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	secureDelete := func() int {
		var v int
		if err := db.db.QueryRowContext(ctx, `SELECT v FROM messages_fts_config WHERE k = 'secure-delete'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, now := range []bool{false, true} {
		if _, err := db.PurgeDeleted(ctx, now); err != nil {
			t.Fatal(err)
		}
		if v, _ := db.Meta(ctx, "keywords_unmerged"); secureDelete() != 0 || v == "" {
			t.Fatalf("a purge (now %v) under a bulk forget: secure-delete %d, keywords_unmerged %q", now, secureDelete(), v)
		}
	}
	end()
	if _, err := db.PurgeDeleted(ctx, false); err != nil {
		t.Fatal(err)
	}
	if v, _ := db.Meta(ctx, "keywords_unmerged"); secureDelete() != 1 || v != "" {
		t.Errorf("a purge after the bulk forget: secure-delete %d, keywords_unmerged %q", secureDelete(), v)
	}
	if held := fileHolds(t, dir, "zqxbulksecret", "Zqxbulksecret"); held != "" {
		t.Errorf("after the purge: %s", held)
	}
}

// A deleted message's words leave the keyword index's pages in the write
// that deletes it (secure-delete), before any purge writes the index
// anew: a checkpoint alone leaves none of them in the file (a page key
// aside, which the purge takes: TestDeletedWordLeavesNoLeafKeyInTheFile).
func TestDeletedWordsLeaveTheIndexInTheSameWrite(t *testing.T) {
	db := openTest(t)
	dir := filepath.Dir(db.path)
	ctx := context.Background()
	channelWithSecret(t, db, 7, 200)
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{7*100000 + 100}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	if held := fileHolds(t, dir, "zqxbulksecret", "Zqxbulksecret"); held != "" {
		t.Errorf("after the deletion and a checkpoint: %s", held)
	}
}
