package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// many returns n messages from id on, a minute apart, with text long
// enough to fill pages.
func many(id int64, n int) []searchd.Message {
	var out []searchd.Message
	for i := range int64(n) {
		m := msg(id+i, time.Duration(id+i)*time.Minute, 0)
		m.Content = strings.Repeat("words of a message ", 20)
		out = append(out, m)
	}
	return out
}

// A crashed searchd leaves dsearch.db-wal and -shm behind. Copying a
// backup over dsearch.db would let SQLite replay that WAL onto the copy;
// Restore moves the old file aside with its WAL and checks the result.
func TestRestoreAfterCrash(t *testing.T) {
	data, backup := crashedData(t)
	kept, err := Restore(context.Background(), data, backup, segment.DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	if n := storedMessages(t, data); n != 2 {
		t.Errorf("restored: %d messages; want the backup's 2", n)
	}
	// The old database is kept, with its own WAL: it opens whole.
	if kept == "" {
		t.Fatal("the old database was not kept")
	}
	if _, err := os.Stat(kept + "-wal"); err != nil {
		t.Errorf("the old WAL did not move with its database: %v", err)
	}
	if n := messagesIn(t, kept); n != 302 {
		t.Errorf("kept database: %d messages; want 302", n)
	}
}

func TestRestoreRefusals(t *testing.T) {
	ctx := context.Background()
	data, backup, db := backedUp(t, many(1, 3)...)
	db.Close()
	unchanged := func(what string) {
		t.Helper()
		if n := storedMessages(t, data); n != 3 {
			t.Errorf("%s changed the database: %d messages", what, n)
		}
		if left, _ := filepath.Glob(filepath.Join(data, FileName+".*")); len(left) > 0 {
			t.Errorf("%s left %v", what, left)
		}
	}

	// While a searchd serve holds the lock.
	lock, err := LockDir(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ctx, data, backup, segment.DefaultRules); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid ") {
		t.Errorf("restore under a running serve: %v", err)
	}
	lock.Release()
	unchanged("restore under a lock")

	garbage := filepath.Join(t.TempDir(), "garbage.db")
	os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 500)), 0o600)
	if _, err := Restore(ctx, data, garbage, segment.DefaultRules); err == nil || !strings.Contains(err.Error(), "not a sound SQLite database") {
		t.Errorf("restore of garbage: %v", err)
	}
	unchanged("restore of garbage")

	other := filepath.Join(t.TempDir(), "other.db")
	if err := copyFile(backup, other); err != nil {
		t.Fatal(err)
	}
	truncated, _ := os.ReadFile(other)
	os.WriteFile(other, truncated[:len(truncated)/2], 0o600)
	if _, err := Restore(ctx, data, other, segment.DefaultRules); err == nil {
		t.Error("restore of a truncated backup succeeded")
	}
	unchanged("restore of a truncated backup")

	if _, err := Restore(ctx, data, filepath.Join(t.TempDir(), "missing.db"), segment.DefaultRules); err == nil {
		t.Error("restore of a missing file succeeded")
	}
	unchanged("restore of a missing file")
}

// One data directory, one daemon: the lock is exclusive, even within a
// process, until released.
func TestLockDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid ") {
		t.Errorf("second lock: %v", err)
	}
	first.Release()
	again, err := LockDir(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again.Release()
}

// A data directory that exists open to others is refused, not used.
func TestOpenRefusesOpenDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	os.Mkdir(dir, 0o700)
	os.Chmod(dir, 0o755)
	if db, err := Open(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		if db != nil {
			db.Close()
		}
		t.Errorf("0755 data directory: %v", err)
	}
	if _, err := LockDir(dir); err == nil {
		t.Error("LockDir took a 0755 data directory")
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); err == nil {
		t.Error("a database was created in it")
	}
}

// Two restores in a row keep both earlier databases.
func TestRestoreTwiceKeepsBoth(t *testing.T) {
	ctx := context.Background()
	data, backup, db := backedUp(t, many(1, 2)...)
	db.Close()
	first, err := Restore(ctx, data, backup, segment.DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Restore(ctx, data, backup, segment.DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	if first == second || !exists(first) || !exists(second) {
		t.Errorf("kept %s and %s", first, second)
	}
}

// crashedData makes a data directory whose database (302 messages) was
// left by a killed searchd, most of it still in its WAL, and a backup of
// its first 2 messages.
func crashedData(t *testing.T) (data, backup string) {
	t.Helper()
	data, backup, db := backedUp(t, many(1, 2)...)
	apply(t, db, many(100, 300)...)
	killed(t, db, data)
	return data, backup
}

// backedUp makes a data directory holding msgs and a backup of it, and
// returns the database still open.
func backedUp(t *testing.T, msgs ...searchd.Message) (data, backup string, db *DB) {
	t.Helper()
	ctx := context.Background()
	data = filepath.Join(t.TempDir(), "data")
	db, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, db, msgs...)
	backup = filepath.Join(t.TempDir(), "backup.db")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	return data, backup, db
}

// killed leaves data as a killed searchd would: recent writes only in
// the WAL. It saves the WAL and its index, closes the database (which
// checkpoints and removes them) and puts them back.
func killed(t *testing.T, db *DB, data string) {
	t.Helper()
	path := filepath.Join(data, FileName)
	saved := map[string][]byte{}
	for _, s := range []string{"-wal", "-shm"} {
		b, err := os.ReadFile(path + s)
		if err != nil || len(b) == 0 {
			t.Fatalf("no %s to leave behind: %v", s, err)
		}
		saved[s] = b
	}
	db.Close()
	for s, b := range saved {
		if err := os.WriteFile(path+s, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// storedMessages opens the database in data (as the next command would),
// checks it is sound and counts its messages.
func storedMessages(t *testing.T, data string) int64 {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if res, err := db.QuickCheck(ctx); err != nil || res != "ok" {
		t.Fatalf("%s: %s %v", data, res, err)
	}
	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return st.Messages
}

// messagesIn opens a copy of a database file with its WAL files (as a
// person would, to look at a kept database) and counts its messages.
func messagesIn(t *testing.T, path string) int64 {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "copy")
	os.Mkdir(dir, 0o700)
	for _, s := range []string{"", "-wal", "-shm"} {
		if b, err := os.ReadFile(path + s); err == nil {
			os.WriteFile(filepath.Join(dir, FileName+s), b, 0o600)
		}
	}
	return storedMessages(t, dir)
}

// A restore killed at any step is completed by the next command that
// opens the database (stats, serve, import): the restored database is in
// place, the old one is kept whole with its own WAL, and no command ever
// finds the data directory without a database and makes an empty one.
func TestRestoreCutShortAtEveryStep(t *testing.T) {
	defer func() { restoreStep = nil }()
	for _, at := range []string{"copied", "journal", "moved-wal", "moved-shm", "moved", "renamed"} {
		t.Run(at, func(t *testing.T) {
			ctx := context.Background()
			data, backup := crashedData(t)
			crashed := false
			restoreStep = func(step string) {
				if step == at {
					crashed = true
					panic("killed")
				}
			}
			func() {
				defer func() { recover() }()
				Restore(ctx, data, backup, segment.DefaultRules)
			}()
			restoreStep = nil
			if !crashed {
				t.Fatalf("the restore never reached %q", at)
			}
			want := int64(2) // restored
			if at == "copied" {
				want = 302 // nothing was touched yet
			}
			if n := storedMessages(t, data); n != want { // the next command
				t.Fatalf("after a restore killed at %q: %d messages, want %d", at, n, want)
			}
			if exists(filepath.Join(data, journalName)) {
				t.Error("the journal is still there")
			}
			if at != "copied" {
				kept, _ := filepath.Glob(filepath.Join(data, FileName+".before-restore-*[0-9TZ]"))
				if len(kept) != 1 {
					t.Fatalf("kept databases: %v", kept)
				}
				if n := messagesIn(t, kept[0]); n != 302 {
					t.Errorf("the kept database holds %d messages, want 302 (its WAL with it)", n)
				}
			}
		})
	}
}

// A data directory where an older version's restore stopped midway (its
// copy and the moved database, no dsearch.db, no journal) is refused by
// Open rather than given a new empty database; so is one where a restore
// is running now in another process.
func TestOpenNeverCreatesADatabaseMidRestore(t *testing.T) {
	ctx := context.Background()
	data, backup := crashedData(t)
	dst := filepath.Join(data, FileName)
	if err := copyFile(backup, dst+".restoring"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "-wal", "-shm"} {
		os.Rename(dst+s, dst+".before-restore-20250101T000000Z"+s)
	}
	if db, err := Open(ctx, data); err == nil || !errors.Is(err, ErrRestoreCutShort) {
		if db != nil {
			db.Close()
		}
		t.Errorf("Open where a restore stopped midway: %v", err)
	}
	if exists(dst) {
		t.Error("an empty database was created where a restore stopped")
	}

	// A restore in progress: it holds the lock and its journal is written.
	lock, err := LockDir(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeJournal(data, restoreJournal{Kept: FileName + ".before-restore-20250101T000000Z", Backup: backup}); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(ctx, data); err == nil || !errors.Is(err, ErrLocked) {
		if db != nil {
			db.Close()
		}
		t.Errorf("Open during a restore: %v", err)
	}
	if exists(dst) {
		t.Error("a database was created during a restore")
	}
	lock.Release()
	// The restore's process died: the next Open completes it.
	if n := storedMessages(t, data); n != 2 {
		t.Errorf("after completing the restore: %d messages", n)
	}
}

// A WAL left without its database (an older version's restore cut short
// between its renames) is kept aside by the next restore, not deleted
// and not left beside the restored database.
func TestRestoreKeepsAnOrphanWAL(t *testing.T) {
	ctx := context.Background()
	data, backup := crashedData(t)
	dst := filepath.Join(data, FileName)
	os.Rename(dst, dst+".before-restore-20250101T000000Z")
	if _, err := Open(ctx, data); !errors.Is(err, ErrRestoreCutShort) {
		t.Fatalf("Open with only a WAL left: %v", err)
	}
	wal, _ := os.ReadFile(dst + "-wal")
	kept, err := Restore(ctx, data, backup, segment.DefaultRules)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(kept + "-wal"); err != nil || string(got) != string(wal) {
		t.Errorf("the orphan WAL was not kept at %s-wal: %v", kept, err)
	}
	if n := storedMessages(t, data); n != 2 {
		t.Errorf("restored: %d messages", n)
	}
}

// A backup made before an opt-out, a deletion or a forget does not bring
// those messages back: restore carries the opt-outs and tombstones of the
// database it replaces into the restored one and applies them.
func TestRestoreKeepsForgets(t *testing.T) {
	ctx := context.Background()
	const member = 9
	mine := msg(2, time.Minute, 0)
	mine.Author = searchd.Author{ID: member, Username: "optsout", Nickname: "숨김"}
	elsewhere := msg(5, 4*time.Minute, 0)
	elsewhere.ChannelID = 200
	inDeleted := func(id int64) searchd.Message { // a channel deleted on Discord after the backup
		m := msg(id, time.Duration(id)*time.Minute, 0)
		m.ChannelID = 300
		return m
	}
	data, backup, db := backedUp(t, msg(1, 0, 0), mine, msg(3, 2*time.Minute, 0), msg(4, 3*time.Minute, 0), elsewhere, inDeleted(7))
	if _, err := db.OptOut(ctx, member, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Apply(ctx, &searchd.Batch{Deletes: []int64{3}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Forget(ctx, ForgetFilter{Channel: 200}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ForgetDeletedChannels(ctx, []int64{300}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	before, err := db.IndexVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scopes := [][]int64{{msg(1, 0, 0).ChannelID}, {999}} // a channel, and one with no messages
	cursorBefore := make([]int64, len(scopes))
	for i, scope := range scopes {
		if cursorBefore[i], err = db.CursorVersion(ctx, scope); err != nil {
			t.Fatal(err)
		}
	}
	killed(t, db, data) // the forgets are in the WAL only

	if _, err := Restore(ctx, data, backup, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(data, FileName+".restoring*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	restored, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	// A cursor made before the restore carries a version at most before:
	// the restored database is past it, so the cursor is refused.
	if after, err := restored.IndexVersion(ctx); err != nil || after <= before {
		t.Errorf("index version %d after the restore, %d before it: a cursor from before would page the restored database", after, before)
	}
	for i, scope := range scopes {
		if after, err := restored.CursorVersion(ctx, scope); err != nil || after <= cursorBefore[i] {
			t.Errorf("channels %v: cursor version %d after the restore, %d before it: a cursor from before would page the restored database", scope, after, cursorBefore[i])
		}
	}
	for _, id := range []int64{2, 3, 5, 7} {
		if _, err := restored.Message(ctx, id); err != ErrNotFound {
			t.Errorf("message %d is back after the restore: %v", id, err)
		}
	}
	for _, id := range []int64{1, 4} {
		if _, err := restored.Message(ctx, id); err != nil {
			t.Errorf("message %d: %v", id, err)
		}
	}
	if names, _ := restored.AuthorNames(ctx, nil); names["optsout"] != nil || names["숨김"] != nil {
		t.Errorf("the opted-out member's names are back: %v", names)
	}
	if out, err := restored.OptedOut(ctx, member); err != nil || !out {
		t.Errorf("the opt-out was lost: %v, %v", out, err)
	}
	// The tombstones came too: the messages again (an import, a backfill)
	// and a new one of the member's are not stored.
	newer := msg(6, 5*time.Minute, 0)
	newer.Author = mine.Author
	if r := apply(t, restored, mine, msg(3, 2*time.Minute, 0), elsewhere, newer, inDeleted(8)); r.Inserted != 0 {
		t.Errorf("after the restore: %+v, want nothing inserted", r)
	}
	if st, err := restored.Stats(ctx); err != nil || st.Messages != 2 {
		t.Errorf("restored: %d messages, %v; want 2", st.Messages, err)
	}
	checkSegments(t, restored)
}

// A database that cannot be read for its forgets is not replaced: that
// would lose them without a word. Moving it away first is the way on.
func TestRestoreRefusesUnreadableCurrent(t *testing.T) {
	ctx := context.Background()
	data, backup, db := backedUp(t, many(1, 2)...)
	db.Close()
	path := filepath.Join(data, FileName)
	removeWAL(path)
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ctx, data, backup, segment.DefaultRules); err == nil || !strings.Contains(err.Error(), "move "+path) {
		t.Fatalf("restore over an unreadable database: %v", err)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), "not a database") {
		t.Error("the unreadable database was replaced")
	}
	os.Rename(path, filepath.Join(t.TempDir(), "moved.db"))
	if _, err := Restore(ctx, data, backup, segment.DefaultRules); err != nil {
		t.Errorf("restore once it was moved away: %v", err)
	}
}

// A restore keeps the servers the bot left out: they leave no tombstones
// (ForgetLeftGuild), so the replaced database's list of them is carried,
// and their messages in the backup forgotten; a page of one in flight
// after the restore is not stored.
func TestRestoreKeepsLeftServersOut(t *testing.T) {
	ctx := context.Background()
	const guild, ch = 1, 400
	inLeft := func(id int64) searchd.Message {
		m := msg(id, time.Duration(id)*time.Minute, 0)
		m.ChannelID = ch
		m.Content = "the left server's words"
		return m
	}
	data, _, db := backedUp(t, msg(1, 0, 0))
	if _, err := db.Apply(ctx, &searchd.Batch{Guilds: []searchd.Guild{{ID: guild, Name: "left server"}},
		Channels: []searchd.Channel{{ID: ch, GuildID: guild, Name: "secret", Kind: "GuildTextChat"}},
		Messages: []searchd.Message{inLeft(2), inLeft(3)}}, segment.DefaultRules, nil); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "in-the-server.db")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	if n, err := db.ForgetLeftGuild(ctx, guild, segment.DefaultRules); err != nil || n != 2 {
		t.Fatalf("forget the left server: %d, %v", n, err)
	}
	restored := restoredFrom(t, db, data, backup)
	for _, id := range []int64{2, 3} {
		if _, err := restored.Message(ctx, id); err != ErrNotFound {
			t.Errorf("message %d of the server the bot left is back after the restore: %v", id, err)
		}
	}
	if res, err := restored.Apply(ctx, &searchd.Batch{Channels: []searchd.Channel{{ID: ch, GuildID: guild}},
		Messages: []searchd.Message{inLeft(5)}}, segment.DefaultRules, nil); err != nil || res.Inserted != 0 {
		t.Errorf("a page of the left server after the restore: %+v, %v; want nothing stored", res, err)
	}
}

// A restore keeps the edits made since the backup: an edit may have taken
// text out ("address removed"), and the backup holds it. The edit of a
// message the backup lacks stores nothing.
func TestRestoreKeepsEdits(t *testing.T) {
	ctx := context.Background()
	orig := msg(1, 0, 0)
	orig.Content = "my home address is 12 secret street"
	data, backup, db := backedUp(t, orig, msg(2, time.Minute, 0))
	edited := orig
	edited.Content = "(address removed)"
	edited.EditedAt = t0.Add(time.Hour).UnixMicro()
	later := msg(3, 2*time.Minute, 0)
	laterEdited := later
	laterEdited.Content, laterEdited.EditedAt = "written after the backup, edited", t0.Add(time.Hour).UnixMicro()
	apply(t, db, later)
	if r := apply(t, db, edited, laterEdited); r.Updated != 2 {
		t.Fatalf("the edits: %+v", r)
	}
	restored := restoredFrom(t, db, data, backup)
	if m, err := restored.Message(ctx, 1); err != nil || m.Content != edited.Content {
		t.Errorf("message 1 after the restore: %v, %v; want the edit %q", m, err, edited.Content)
	}
	if hits, err := restored.Lexical(ctx, `"secret"`, Filter{}, 10); err != nil || len(hits) != 0 {
		t.Errorf("the text the edit took out is found again after the restore: %v, %v", hits, err)
	}
	if _, err := restored.Message(ctx, 3); err != ErrNotFound {
		t.Errorf("a message written after the backup was brought by its edit: %v", err)
	}
}

// A restore carries an edit's mentions with its text: the backup's
// message mentioned a member the edit took out, and the restored copy
// kept them mentioned (carryEdits applies edits as partial updates, which
// keep mentions).
func TestRestoreKeepsEditsMentions(t *testing.T) {
	ctx := context.Background()
	orig := msg(1, 0, 0)
	orig.Content, orig.Mentions = "<@42> meet me", []int64{42}
	data, backup, db := backedUp(t, orig, msg(2, time.Minute, 0))
	edited := orig
	edited.Content, edited.Mentions, edited.EditedAt = "<@44> meet me", []int64{44}, t0.Add(time.Hour).UnixMicro()
	if r := apply(t, db, edited); r.Updated != 1 {
		t.Fatalf("the edit: %+v", r)
	}
	restored := restoredFrom(t, db, data, backup)
	got, err := queryIDs(ctx, restored.db, `SELECT user_id FROM message_mentions WHERE message_id = 1 ORDER BY user_id`)
	if err != nil || !reflect.DeepEqual(got, []int64{44}) {
		t.Errorf("mentions of the edited message after the restore: %v, %v; want [44]", got, err)
	}
}

// A restore carries edits a thousand at a time: every one of more than a
// thousand.
func TestRestoreKeepsManyEdits(t *testing.T) {
	ctx := context.Background()
	var msgs []searchd.Message
	for i := range 1005 {
		msgs = append(msgs, msg(int64(i), time.Duration(i)*time.Minute, 0)) // ID 0 too
	}
	data, backup, db := backedUp(t, msgs...)
	for i := range msgs {
		msgs[i].Content, msgs[i].EditedAt = fmt.Sprintf("edited %d", i), t0.Add(time.Hour).UnixMicro()
	}
	if r := apply(t, db, msgs...); r.Updated != len(msgs) {
		t.Fatalf("the edits: %+v", r)
	}
	restored := restoredFrom(t, db, data, backup)
	for _, i := range []int{0, 999, 1000, 1004} {
		if m, err := restored.Message(ctx, int64(i)); err != nil || m.Content != fmt.Sprintf("edited %d", i) {
			t.Errorf("message %d after the restore: %v, %v; want its edit", i, m, err)
		}
	}
}

// restoredFrom closes db, restores backup over data and opens the result
// (closed when the test ends).
func restoredFrom(t *testing.T, db *DB, data, backup string) *DB {
	t.Helper()
	db.Close()
	if _, err := Restore(context.Background(), data, backup, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	restored, err := Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { restored.Close() })
	return restored
}

// A restore gives the database a generation of its own, not the backed-up
// one's (which the bot's marks knew), and a database keeps its generation
// across opens.
func TestRestoreChangesTheGeneration(t *testing.T) {
	ctx := context.Background()
	data, _, db := backedUp(t, many(1, 2)...)
	before, err := db.Generation(ctx)
	if err != nil || before == "" {
		t.Fatalf("generation %q, %v", before, err)
	}
	if again, _ := db.Generation(ctx); again != before {
		t.Errorf("asked twice: %q then %q", before, again)
	}
	backup := filepath.Join(t.TempDir(), "with-generation.db") // the generation in it
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Restore(ctx, data, backup, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	after, err := db.Generation(ctx)
	if err != nil || after == "" || after == before {
		t.Errorf("after a restore: generation %q, %v; before it %q", after, err, before)
	}
}

// A restore cut short once its journal is written is completed by the
// next open, and the restored database must not keep the backed-up one's
// generation then either: it was set only after the copy took the
// database's place, so a crash there left the generation the bot's marks
// knew, and a running bot never learnt that searchd held less.
func TestRestoreCutShortStillChangesTheGeneration(t *testing.T) {
	defer func() { restoreStep = nil }()
	for _, at := range []string{"journal", "renamed"} {
		t.Run(at, func(t *testing.T) {
			ctx := context.Background()
			data, _, db := backedUp(t, many(1, 2)...)
			before, err := db.Generation(ctx)
			if err != nil {
				t.Fatal(err)
			}
			backup := filepath.Join(t.TempDir(), "with-generation.db")
			if err := db.Backup(ctx, backup); err != nil {
				t.Fatal(err)
			}
			db.Close()
			restoreStep = func(step string) {
				if step == at {
					panic("killed")
				}
			}
			func() {
				defer func() { recover() }()
				Restore(ctx, data, backup, segment.DefaultRules)
			}()
			restoreStep = nil
			db, err = Open(ctx, data) // completes the restore
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if after, err := db.Generation(ctx); err != nil || after == before {
				t.Errorf("a restore killed at %q: generation %q, %v; before it %q", at, after, err, before)
			}
		})
	}
}

// searchd forget --author forgets every name the author was seen under
// and every mention of them, not only their messages: a restore of a
// backup made before it must not bring those back, as it does not an
// opt-out's. The messages' tombstones alone said nothing of the names.
func TestRestoreKeepsAnAuthorForgotten(t *testing.T) {
	ctx := context.Background()
	const member = 9
	theirs := msg(2, time.Minute, 0)
	theirs.Author = searchd.Author{ID: member, Username: "forgottenname", GlobalName: "Forgotten Display", Nickname: "잊힌별명"}
	mentioning := msg(3, 2*time.Minute, 0)
	mentioning.Mentions = []int64{member}
	data, backup, db := backedUp(t, msg(1, 0, 0), theirs, mentioning)
	if _, err := db.Forget(ctx, ForgetFilter{Author: member}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Restore(ctx, data, backup, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	restored, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	if _, err := restored.Message(ctx, 2); err != ErrNotFound {
		t.Errorf("the forgotten author's message is back: %v", err)
	}
	for _, q := range []string{`SELECT COUNT(*) FROM user_names WHERE user_id = ?`, `SELECT COUNT(*) FROM server_nicknames WHERE user_id = ?`,
		`SELECT COUNT(*) FROM users WHERE id = ?`, `SELECT COUNT(*) FROM message_mentions WHERE user_id = ?`} {
		var n int
		if err := restored.db.QueryRowContext(ctx, q, member).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d rows back after the restore", q, n)
		}
	}
	if names, _ := restored.AuthorNames(ctx, nil); names["forgottenname"] != nil || names["잊힌별명"] != nil || names["forgotten display"] != nil {
		t.Errorf("the forgotten author's names are back: %v", names)
	}
}

// A forget the backup already holds is not done again: what the author
// posted after it, and the name they came back under, stay.
func TestRestoreKeepsWhatAForgottenAuthorPostedSince(t *testing.T) {
	ctx := context.Background()
	const member = 9
	by := func(id int64, name string) searchd.Message {
		m := msg(id, time.Duration(id)*time.Minute, 0)
		m.Author = searchd.Author{ID: member, Username: name}
		return m
	}
	data := filepath.Join(t.TempDir(), "data")
	db, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, db, msg(1, 0, 0), by(2, "before"))
	if _, err := db.Forget(ctx, ForgetFilter{Author: member}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	apply(t, db, by(3, "cameback"))
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Restore(ctx, data, backup, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	restored, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	if _, err := restored.Message(ctx, 3); err != nil {
		t.Errorf("what the author posted after the forget: %v", err)
	}
	if _, err := restored.Message(ctx, 2); err != ErrNotFound {
		t.Errorf("the forgotten message is back: %v", err)
	}
	if names, _ := restored.AuthorNames(ctx, nil); names["cameback"] == nil || names["before"] != nil {
		t.Errorf("names after the restore: %v, want cameback alone of the author's", names)
	}
}
