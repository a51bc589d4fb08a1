package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

func TestBackupRestores(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	apply(t, db, msg(1, 0, 0), msg(2, time.Minute, 1))
	path := filepath.Join(t.TempDir(), "copy", FileName)
	if err := db.Backup(ctx, path); err == nil {
		t.Fatal("backup into a missing directory succeeded")
	}
	path = filepath.Join(t.TempDir(), FileName)
	if err := db.Backup(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := db.Backup(ctx, path); err == nil {
		t.Error("backup over an existing file succeeded")
	}
	// "Restore": open the copy as a data directory of its own.
	os.Chmod(filepath.Dir(path), 0o700)
	restored, err := Open(ctx, filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	st, err := restored.Stats(ctx)
	if err != nil || st.Messages != 2 || st.Segments != 1 {
		t.Errorf("restored: %+v, %v", st, err)
	}
	if ok, _ := restored.QuickCheck(ctx); ok != "ok" {
		t.Errorf("restored quick_check: %s", ok)
	}
}

// A symlink at the destination, even a dangling one, is refused: the
// backup must not land wherever it points.
func TestBackupRefusesSymlink(t *testing.T) {
	db := openTest(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "target.db")
	link := filepath.Join(dir, "backup.db")
	os.Symlink(target, link)
	if err := db.Backup(context.Background(), link); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("backup through a dangling symlink: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "target.db")); err == nil {
		t.Error("the backup followed the symlink")
	}
}

// A backup that fails part-way (here: the disk "fills", as a file size
// limit makes writes fail) leaves nothing: no partial file under the
// backup's name, no temporary file beside it.
func TestBackupFailsWhole(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	var msgs []searchd.Message
	for i := int64(1); i <= 400; i++ {
		m := msg(i, time.Duration(i)*time.Minute, 0)
		m.Content = strings.Repeat("enough text to fill pages ", 10)
		msgs = append(msgs, m)
	}
	apply(t, db, msgs...)
	dir := t.TempDir()
	path := filepath.Join(dir, "backup.db")
	restore := limitFileSize(t, 64<<10)
	err := db.Backup(ctx, path)
	restore()
	if err == nil {
		t.Fatal("backup past the size limit succeeded")
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("a failed backup left %v (%v)", left[0].Name(), err)
	}
	if err := db.Backup(ctx, path); err != nil {
		t.Fatalf("backup with room: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Errorf("a backup left %d files", len(left))
	}
}

func TestForget(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	a, b := msg(1, 0, 0), msg(2, time.Minute, 0)
	b.Author = searchd.Author{ID: 9, Username: "forgetme", Nickname: "잊어줘"}
	c := msg(3, 2*time.Minute, 0)
	c.Mentions = []int64{9}
	apply(t, db, a, b, c)
	if _, err := db.Forget(ctx, ForgetFilter{}, segment.DefaultRules); err == nil {
		t.Error("forget everything accepted")
	}
	n, err := db.Forget(ctx, ForgetFilter{Author: 9}, segment.DefaultRules)
	if err != nil || n != 1 {
		t.Fatalf("forget: %d, %v", n, err)
	}
	if _, err := db.Message(ctx, 2); err != ErrNotFound {
		t.Errorf("message 2: %v", err)
	}
	names, _ := db.AuthorNames(ctx, nil)
	if names["forgetme"] != nil || names["잊어줘"] != nil {
		t.Errorf("names kept: %v", names)
	}
	hits, err := db.Lexical(ctx, `text : "message"`, Filter{}, 10)
	if err != nil || len(hits) != 2 {
		t.Errorf("keyword index after forget: %v, %v", hits, err)
	}
	checkSegments(t, db)
	// Re-importing an old export does not bring it back.
	if r := apply(t, db, b); r.Skipped != 1 {
		t.Errorf("re-import: %+v", r)
	}
	if n, err := db.Forget(ctx, ForgetFilter{Before: t0.Add(time.Hour).UnixMicro()}, segment.DefaultRules); err != nil || n != 2 {
		t.Errorf("forget before: %d, %v", n, err)
	}
}

// A forgotten author's message stored again (an import of an older
// export, a backfill) is refused by its tombstone, and brings back none
// of the names the forget took away with it.
func TestForgottenAuthorsOldMessageBringsNoNameBack(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	const member = 9
	theirs := msg(2, time.Minute, 0)
	theirs.Author = searchd.Author{ID: member, Username: "gonename", GlobalName: "Gone Display", Nickname: "gonenick"}
	apply(t, db, msg(1, 0, 0), theirs)
	if _, err := db.Forget(ctx, ForgetFilter{Author: member}, segment.DefaultRules); err != nil {
		t.Fatal(err)
	}
	if r := apply(t, db, theirs); r.Inserted != 0 || r.Skipped != 1 {
		t.Errorf("the forgotten message again: %+v, want it skipped", r)
	}
	for _, q := range []string{`SELECT COUNT(*) FROM users WHERE id = ?`, `SELECT COUNT(*) FROM user_names WHERE user_id = ?`,
		`SELECT COUNT(*) FROM server_nicknames WHERE user_id = ?`} {
		var n int
		if err := db.db.QueryRowContext(ctx, q, member).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d rows back", q, n)
		}
	}
	if names, _ := db.AuthorNames(ctx, nil); names["gonename"] != nil || names["gone display"] != nil || names["gonenick"] != nil {
		t.Errorf("the forgotten author's names are back: %v", names)
	}
}
