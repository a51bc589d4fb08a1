package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"dsearch/searchd/segment"
)

// walFiles are the suffixes of the files SQLite keeps beside a database
// in WAL mode. They belong to that file alone: left beside another one,
// a crashed process's WAL is replayed onto it and corrupts it.
var walFiles = []string{"-wal", "-shm", "-journal"}

// journalName is the restore journal in the data directory: it exists
// from the moment Restore starts to move files until the restored
// database has its name, and says where the old one goes. Whoever next
// takes the data directory's lock (LockDir: serve, restore, or Open
// itself) completes that restore before anything opens the database.
const journalName = "restore-journal"

// restoreJournal is what the journal holds.
type restoreJournal struct {
	Kept   string `json:"kept"`   // the old database's new name, in the data directory
	Backup string `json:"backup"` // what is being restored, for messages
}

// restoreStep, when set (tests), runs after each step of a restore; a
// panic there is a crash at that point.
var restoreStep func(step string)

func step(name string) {
	if restoreStep != nil {
		restoreStep(name)
	}
}

// Restore replaces the database in dir with a copy of the backup file,
// and returns where the previous database was kept ("" if there was
// none). It holds the data directory's lock, so it refuses while a
// searchd serve runs. The backup is copied beside the database and
// checked (integrity, and that it is dsearch's) before anything is
// touched, and made to forget what the database it replaces was told to
// forget (opt-outs and tombstones, carryForgets, with rules for the
// conversations that lose messages): a backup made before an opt-out or
// a forget must not bring those messages back. Then a journal is written, the old database moves aside with
// its own -wal and -shm (a pair SQLite can still open), the copy takes
// its name and the journal goes; a crash anywhere in between is completed
// by the next LockDir or Open (completeRestore), never left as a missing
// database or a WAL beside the wrong file. The result is opened, migrated
// and checked again.
func Restore(ctx context.Context, dir, backup string, rules segment.Rules) (kept string, err error) {
	lock, err := LockDir(dir) // completes an earlier restore cut short
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
	if err := carryForgets(ctx, dst, tmp, rules); err != nil {
		removeWithWAL(tmp)
		return "", fmt.Errorf("restore: %w", err)
	}
	// Not the backed-up database's generation: the bot's marks ran ahead
	// of what it holds (Generation). In the copy, before the journal: a
	// restore cut short is completed without this function.
	if err := newCopyGeneration(ctx, tmp); err != nil {
		removeWithWAL(tmp)
		return "", fmt.Errorf("restore: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		removeWithWAL(tmp)
		return "", fmt.Errorf("restore: %w", err)
	}
	step("copied")
	if slices.ContainsFunc(append([]string{""}, walFiles...), func(suffix string) bool { return exists(dst + suffix) }) {
		// Even a WAL without its database is kept (an older version's
		// restore cut short may have left it): it may hold commits.
		kept = dst + ".before-restore-" + time.Now().UTC().Format("20060102T150405Z")
		for i := 2; exists(kept); i++ { // never over an earlier restore's
			kept = fmt.Sprintf("%s.before-restore-%s-%d", dst, time.Now().UTC().Format("20060102T150405Z"), i)
		}
	}
	j := restoreJournal{Kept: filepath.Base(kept), Backup: backup}
	if err := writeJournal(dir, j); err != nil {
		removeWithWAL(tmp)
		return "", fmt.Errorf("restore: %w", err)
	}
	step("journal")
	if err := completeRestore(dir, j); err != nil {
		return kept, fmt.Errorf("restore: %w (the next searchd start completes it)", err)
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

// newCopyGeneration gives the restored copy at path a generation of its
// own. A backup older than the meta table has none, and gets a new one
// at its first ask (Generation).
func newCopyGeneration(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := outOfWAL(ctx, db); err != nil { // as carryForgets leaves it
		return err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).Scan(&n); err != nil || n == 0 {
		return err
	}
	_, err = db.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, generationKey, newGeneration())
	return err
}

// completeRestore carries a journaled restore through: every file of the
// old database (its WAL files first, so none is ever left beside the new
// one) moves to the kept name, the checked copy takes the database's
// name, and the journal goes. Each step is a rename that a repeat skips
// once done, so a crash at any point is completed by running it again;
// the copy was synced and checked before the journal was written.
func completeRestore(dir string, j restoreJournal) error {
	dst := filepath.Join(dir, FileName)
	tmp := dst + ".restoring"
	if exists(tmp) {
		for _, suffix := range append(slices.Clone(walFiles), "") {
			if !exists(dst+suffix) || j.Kept == "" {
				continue
			}
			if err := os.Rename(dst+suffix, filepath.Join(dir, j.Kept)+suffix); err != nil {
				return fmt.Errorf("keeping the old database: %w", err)
			}
			step("moved" + suffix)
		}
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
		step("renamed")
	}
	if err := syncFile(dir); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, journalName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncFile(dir)
}

// writeJournal stores j durably: written, synced, renamed, and the
// directory synced.
func writeJournal(dir string, j restoreJournal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, journalName+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, journalName)); err != nil {
		return err
	}
	return syncFile(dir)
}

// pendingRestore reads the journal of a restore cut short, if any.
func pendingRestore(dir string) (*restoreJournal, error) {
	data, err := os.ReadFile(filepath.Join(dir, journalName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j restoreJournal
	if err := json.Unmarshal(data, &j); err != nil || strings.Contains(j.Kept, "/") {
		return nil, fmt.Errorf("the restore journal %s is unreadable (%v); move the files by hand (docs/operations.md)", filepath.Join(dir, journalName), err)
	}
	return &j, nil
}

// ErrRestoreCutShort means the data directory has what a restore leaves
// midway but no journal to complete it (an older searchd's restore was
// cut short): no database is created there, as that would hide it.
var ErrRestoreCutShort = errors.New("a restore was cut short")

// checkNoRestoreLeft refuses a data directory without a database where
// a restore's copy or the database it moved aside lies: creating an
// empty database there would serve nothing without a word.
func checkNoRestoreLeft(dir string) error {
	dst := filepath.Join(dir, FileName)
	if exists(dst) {
		return nil
	}
	left, _ := filepath.Glob(dst + ".before-restore-*")
	if exists(dst + ".restoring") {
		left = append(left, dst+".restoring")
	}
	for _, p := range left {
		if !strings.HasSuffix(p, "-wal") && !strings.HasSuffix(p, "-shm") && !strings.HasSuffix(p, "-journal") {
			return fmt.Errorf("%w: %s has no %s but holds %s; run searchd restore again (or rename the database you want to %s)",
				ErrRestoreCutShort, dir, FileName, filepath.Base(p), FileName)
		}
	}
	return nil
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
