package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// Backup writes a consistent copy of the live database to path (which
// must not exist), with VACUUM INTO: readers and writers may go on. The
// copy is written to a temporary file beside path, synced, and renamed:
// a full disk or a crash leaves no partial backup under path's name, and
// a symlink at path (even a dangling one) is refused, never followed.
func (db *DB) Backup(ctx context.Context, path string) (err error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("backup: %s is a symlink; refusing to write through it", path)
		}
		return fmt.Errorf("backup: %s exists; choose a new file", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %w", err)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp)
			os.Remove(tmp + "-journal")
		}
	}()
	// VACUUM INTO accepts an empty file; CreateTemp made it 0600.
	if _, err := db.db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := purgeCopy(ctx, tmp); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return syncFile(dir)
}

// purgeCopy writes a backup copy's keyword index anew when the live one
// still held traces of deleted words (rewriteKeywords: its page keys, or
// the words a bulk forget running meanwhile only marked): VACUUM INTO
// copies the index as it is.
func purgeCopy(ctx context.Context, path string) error {
	copy, err := sql.Open("sqlite", "file:"+path+"?_pragma=secure_delete(1)")
	if err != nil {
		return err
	}
	defer copy.Close()
	last, rewritten, err := unindexedCounts(ctx, copy)
	if err != nil {
		return err
	}
	var unmerged int
	if err := copy.QueryRowContext(ctx, `SELECT COUNT(*) FROM meta WHERE key = 'keywords_unmerged'`).Scan(&unmerged); err != nil {
		return err
	}
	if last == rewritten && unmerged == 0 {
		return nil
	}
	return rewriteKeywords(ctx, copy)
}

// syncFile flushes a file, or a directory's entries, to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// ForgetFilter selects what Forget deletes; at least one field is set.
type ForgetFilter struct {
	Channel, Author int64
	Before          int64 // µs: messages created before it
	// Untombstoned: leave no tombstones (ForgetLeftGuild).
	Untombstoned bool
}

// Forget deletes the selected messages with everything derived from them
// (segment membership, vectors, keyword index, mentions), leaving only
// their IDs as tombstones so no import brings them back. Forgetting an
// author also forgets every name they were seen under. It returns the
// number of messages deleted.
func (db *DB) Forget(ctx context.Context, f ForgetFilter, rules segment.Rules) (int, error) {
	if f.Channel == 0 && f.Author == 0 && f.Before == 0 {
		return 0, errors.New("forget: name a channel, an author or a time")
	}
	q := `SELECT id FROM messages m WHERE 1=1`
	var args []any
	if f.Channel != 0 {
		q += ` AND m.channel_id = ?`
		args = append(args, f.Channel)
	}
	if f.Author != 0 {
		q += ` AND m.author_id = ?`
		args = append(args, f.Author)
	}
	if f.Before != 0 {
		q += ` AND m.created_at < ?`
		args = append(args, f.Before)
	}
	ids, err := queryIDs(ctx, db.db, q, args...)
	if err != nil {
		return 0, err
	}
	if len(ids) >= bulkForget {
		end, err := db.startBulkForget(ctx)
		if err != nil {
			return 0, err
		}
		defer end()
	}
	deleted := 0
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 5000)]
		ids = ids[len(chunk):]
		res, err := db.Apply(ctx, &searchd.Batch{Deletes: chunk, Untombstoned: f.Untombstoned}, rules, nil)
		if err != nil {
			return deleted, err
		}
		deleted += res.Deleted
	}
	if err := db.mergeKeywords(ctx); err != nil {
		return deleted, err
	}
	if f.Author != 0 && f.Channel == 0 && f.Before == 0 {
		err = db.write(ctx, func(tx *sql.Tx) error {
			// Recorded: a restore of an older backup forgets them again.
			if _, err := tx.ExecContext(ctx, `INSERT INTO forgotten_authors (user_id, at) VALUES (?, ?)
				ON CONFLICT DO UPDATE SET at = MAX(at, excluded.at)`, f.Author, time.Now().UnixMicro()); err != nil {
				return err
			}
			for _, q := range []string{`DELETE FROM user_names WHERE user_id = ?`, `DELETE FROM server_nicknames WHERE user_id = ?`,
				`DELETE FROM users WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE author_id = users.id)`,
				`DELETE FROM message_mentions WHERE user_id = ?`} {
				if _, err := tx.ExecContext(ctx, q, f.Author); err != nil {
					return err
				}
			}
			return nil
		})
		db.purged.textTakenOut() // the names
	}
	return deleted, err
}
