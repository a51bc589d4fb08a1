package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// PurgeDeleted takes the traces of deleted and edited messages out of the
// database file: the keyword index keeps a deleted message's words until
// its segments are merged, so they are merged, all of them ('optimize';
// about 2 s at 650,000 messages, rewriting the index), and the WAL, whose
// older frames hold the pages as they were, is checkpointed and emptied.
// Deleted rows themselves are zeroed as they go (secure_delete, db.go).
// It does nothing when no message was deleted or edited since the last
// purge (text_changes' sequence), unless always. What a member or the
// operator forgets by name (an opt-out, searchd forget) and a restore are
// purged at once; the rest by searchd serve's PurgeEvery.
func (db *DB) PurgeDeleted(ctx context.Context, always bool) (bool, error) {
	purged := false
	err := db.write(ctx, func(tx *sql.Tx) error {
		var last, done int64
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'text_changes'),
			COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purged_seq'), 0)`).Scan(&last, &done); err != nil {
			return err
		}
		if last == done && !always {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages_fts (messages_fts) VALUES ('optimize')`); err != nil {
			return err
		}
		purged = true
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('purged_seq', CAST(? AS TEXT))
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, last)
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
