package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// PurgeDeleted takes the traces of deleted and edited messages out of the
// database file: the keyword index keeps a deleted message's words until
// its segments are merged, so they are merged, all of them ('optimize';
// at most 2.2 s at 650,000 messages, 26 s at 6.5 M: docs/design.md), and the WAL, whose
// older frames hold the pages as they were, is checkpointed and emptied.
// Deleted rows themselves are zeroed as they go (secure_delete, db.go).
// It does nothing when no message was deleted or edited since the last
// purge (text_changes' sequence), unless always. What a member or the
// operator forgets by name (an opt-out, searchd forget) and a restore are
// purged at once; the rest by searchd serve's PurgeEvery.
func (db *DB) PurgeDeleted(ctx context.Context, always bool) (bool, error) {
	purged := false
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		purged, err = purgeKeywords(ctx, tx, always)
		return err
	})
	if err != nil || !purged {
		return purged, err
	}
	// Best effort: a reader holding an old snapshot keeps the WAL until
	// the next checkpoint, which SQLite runs as the WAL grows.
	_, err = db.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return true, err
}

// purgeKeywords merges the keyword index's segments, which drops what
// deleted and edited messages left in them, if a message was deleted or
// edited since the last merge (or always), and records the merge: for the
// live database (PurgeDeleted) and a backup's copy (purgeCopy) alike.
func purgeKeywords(ctx context.Context, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, always bool) (bool, error) {
	var last, done int64
	if err := q.QueryRowContext(ctx, `SELECT (SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'text_changes'),
		COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purged_seq'), 0)`).Scan(&last, &done); err != nil {
		return false, err
	}
	if last == done && !always {
		return false, nil
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO messages_fts (messages_fts) VALUES ('optimize')`); err != nil {
		return false, err
	}
	_, err := q.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('purged_seq', CAST(? AS TEXT))
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, last)
	return err == nil, err
}

// PurgeEvery runs PurgeDeleted every interval until ctx ends: deletions
// and edits leave the file within that time.
func (db *DB) PurgeEvery(ctx context.Context, interval time.Duration, failed func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := db.PurgeDeleted(ctx, false); err != nil && ctx.Err() == nil {
				failed(err)
			}
		}
	}
}
