package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
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
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	db, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, db, many(1, 2)...)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	// Later writes sit in the WAL; "crash" by saving the WAL and its
	// index as a killed process leaves them, then putting them back
	// after the clean close has checkpointed and removed them.
	apply(t, db, many(100, 300)...)
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

	kept, err := Restore(ctx, data, backup)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	if res, err := restored.QuickCheck(ctx); err != nil || res != "ok" {
		t.Fatalf("restored database: %s %v", res, err)
	}
	if st, err := restored.Stats(ctx); err != nil || st.Messages != 2 {
		t.Errorf("restored: %d messages, %v; want the backup's 2", st.Messages, err)
	}
	// The old database is kept, with its own WAL: it opens whole.
	if kept == "" {
		t.Fatal("the old database was not kept")
	}
	if _, err := os.Stat(kept + "-wal"); err != nil {
		t.Errorf("the old WAL did not move with its database: %v", err)
	}
	oldDir := filepath.Join(t.TempDir(), "old")
	os.Mkdir(oldDir, 0o700)
	for _, s := range []string{"", "-wal", "-shm"} {
		b, _ := os.ReadFile(kept + s)
		os.WriteFile(filepath.Join(oldDir, FileName+s), b, 0o600)
	}
	old, err := Open(ctx, oldDir)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if st, err := old.Stats(ctx); err != nil || st.Messages != 302 {
		t.Errorf("kept database: %d messages, %v; want 302", st.Messages, err)
	}
}

func TestRestoreRefusals(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	db, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, db, many(1, 3)...)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	db.Close()
	unchanged := func(what string) {
		t.Helper()
		db, err := Open(ctx, data)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer db.Close()
		if st, _ := db.Stats(ctx); st.Messages != 3 {
			t.Errorf("%s changed the database: %+v", what, st)
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
	if _, err := Restore(ctx, data, backup); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid ") {
		t.Errorf("restore under a running serve: %v", err)
	}
	lock.Release()
	unchanged("restore under a lock")

	garbage := filepath.Join(t.TempDir(), "garbage.db")
	os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 500)), 0o600)
	if _, err := Restore(ctx, data, garbage); err == nil || !strings.Contains(err.Error(), "not a sound SQLite database") {
		t.Errorf("restore of garbage: %v", err)
	}
	unchanged("restore of garbage")

	other := filepath.Join(t.TempDir(), "other.db")
	if err := copyFile(backup, other); err != nil {
		t.Fatal(err)
	}
	truncated, _ := os.ReadFile(other)
	os.WriteFile(other, truncated[:len(truncated)/2], 0o600)
	if _, err := Restore(ctx, data, other); err == nil {
		t.Error("restore of a truncated backup succeeded")
	}
	unchanged("restore of a truncated backup")

	if _, err := Restore(ctx, data, filepath.Join(t.TempDir(), "missing.db")); err == nil {
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
	data := filepath.Join(t.TempDir(), "data")
	db, err := Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, db, many(1, 2)...)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	db.Close()
	first, err := Restore(ctx, data, backup)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Restore(ctx, data, backup)
	if err != nil {
		t.Fatal(err)
	}
	if first == second || !exists(first) || !exists(second) {
		t.Errorf("kept %s and %s", first, second)
	}
}
