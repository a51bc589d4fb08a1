package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// walFiles are the suffixes of the files SQLite keeps beside a database
// in WAL mode. They belong to that file alone: left beside another one,
// a crashed process's WAL is replayed onto it and corrupts it.
var walFiles = []string{"-wal", "-shm", "-journal"}

// Restore replaces the database in dir with a copy of the backup file,
// and returns where the previous database was kept ("" if there was
// none). It holds the data directory's lock, so it refuses while a
// searchd serve runs. The backup is copied beside the database and
// checked (integrity, and that it is dsearch's) before anything is
// touched; then the old database moves aside with its own -wal and -shm
// (a pair SQLite can still open), the copy takes its name, and the
// result is opened, migrated and checked again.
func Restore(ctx context.Context, dir, backup string) (kept string, err error) {
	lock, err := LockDir(dir)
	if err != nil {
		return "", err
	}
	defer lock.Release()
	dst := filepath.Join(dir, FileName)
	tmp := dst + ".restoring"
	removeWithWAL(tmp)
	if err := copyFile(backup, tmp); err != nil {
		removeWithWAL(tmp)
		return "", fmt.Errorf("restore: %w", err)
	}
	if err := checkBackup(ctx, tmp); err != nil {
		removeWithWAL(tmp)
		return "", fmt.Errorf("restore: backup %s: %w", backup, err)
	}
	removeWAL(tmp) // what the check may have left beside tmp (no data: it only read)
	kept = dst + ".before-restore-" + time.Now().UTC().Format("20060102T150405Z")
	for i := 2; exists(kept); i++ { // never over an earlier restore's
		kept = fmt.Sprintf("%s.before-restore-%s-%d", dst, time.Now().UTC().Format("20060102T150405Z"), i)
	}
	moved := false
	for _, suffix := range append([]string{""}, walFiles...) {
		switch err := os.Rename(dst+suffix, kept+suffix); {
		case err == nil:
			moved = true
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("restore: keeping the old database: %w", err)
		}
	}
	if !moved {
		kept = ""
	}
	if err := os.Rename(tmp, dst); err != nil {
		return kept, fmt.Errorf("restore: %w", err)
	}
	if err := syncFile(dir); err != nil {
		return kept, fmt.Errorf("restore: %w", err)
	}
	db, err := Open(ctx, dir)
	if err != nil {
		return kept, fmt.Errorf("restore: the restored database does not open: %w", err)
	}
	defer db.Close()
	if res, err := db.QuickCheck(ctx); err != nil || res != "ok" {
		return kept, fmt.Errorf("restore: the restored database fails its check: %s %v", res, err)
	}
	return kept, nil
}

// checkBackup opens path alone (no migrations) and requires SQLite's
// integrity check to pass and the file to hold dsearch's schema.
func checkBackup(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check(1)`).Scan(&res); err != nil {
		return fmt.Errorf("not a sound SQLite database: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("fails its integrity check: %s", res)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'schema_migrations'`).Scan(&n); err != nil || n == 0 {
		return errors.New("not a dsearch database (no schema_migrations table)")
	}
	return nil
}

// copyFile copies src to a new file dst (0600) and syncs it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// removeWAL removes the WAL files beside path.
func removeWAL(path string) {
	for _, suffix := range walFiles {
		os.Remove(path + suffix)
	}
}

// removeWithWAL removes path and the WAL files beside it.
func removeWithWAL(path string) {
	os.Remove(path)
	removeWAL(path)
}
