package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"
)

// What is deleted is gone from the files too. A deleted or edited
// message's row is zeroed as it goes (secure_delete, db.go) and its words
// leave the keyword index in the same write (FTS5's secure-delete,
// migration 0022), but the WAL keeps the pages as they were before the
// write until it is checkpointed and emptied: PurgeDeleted does that.

// errWALInUse: a reader held an older snapshot, so the WAL could not be
// emptied; the next purge tries again.
var errWALInUse = errors.New("the WAL is in use by a reader")

// purged is the text_changes sequence the WAL was last emptied at.
type purged struct {
	mu  sync.Mutex
	seq int64
	// soon: a write deleted or edited a message (applyParts); PurgeEvery
	// purges a moment later instead of at its next tick.
	soon chan struct{}
}

// purgeSoon is how long PurgeEvery lets a burst of deletions land before
// it purges.
const purgeSoon = 2 * time.Second

// textTakenOut tells PurgeEvery that a write took text out.
func (p *purged) textTakenOut() {
	select {
	case p.soon <- struct{}{}:
	default: // one is waiting already
	}
}

// Forgetting many messages at once (a channel, a server, an author) takes
// their words out of the keyword index in bulk. secure-delete removes each
// message's words from the index's segments one by one (about 1 ms a
// message at 650,000 messages: 110 s for a channel of 81,250, against 20 s
// before it); a merge of the whole index ('optimize') removes every word
// deletions marked in one pass (2.2 s at 650,000, 26 s at 6.5 M). So a
// large forget turns secure-delete off while it deletes, and merges the
// index at its end; a forget cut short is merged at the next open or purge
// (keywords_unmerged).
const bulkForget = 5000

// unmergeKeywords turns secure-delete off until mergeKeywords.
func unmergeKeywords(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 0)`); err != nil {
		return err
	}
	return setMeta(ctx, tx, "keywords_unmerged", "1")
}

// mergeKeywords merges the keyword index, if a bulk forget left it
// unmerged, and turns secure-delete back on.
func (db *DB) mergeKeywords(ctx context.Context) error {
	if v, err := db.Meta(ctx, "keywords_unmerged"); err != nil || v == "" {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error { return mergeKeywordsIn(ctx, tx) })
}

// mergeKeywordsIn is mergeKeywords for the live database and a backup's
// copy (one made while a bulk forget ran) alike.
func mergeKeywordsIn(ctx context.Context, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}) error {
	r, err := q.ExecContext(ctx, `DELETE FROM meta WHERE key = 'keywords_unmerged'`)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return nil
	}
	for _, stmt := range []string{`INSERT INTO messages_fts (messages_fts) VALUES ('optimize')`,
		`INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1)`} {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// PurgeDeleted checkpoints the WAL and empties it, when a message was
// deleted or edited since it last did (text_changes' sequence), or
// always. What a member or the operator forgets by name (an opt-out,
// searchd forget) and a restore are purged at once; the rest by
// searchd serve's PurgeEvery, within a minute.
func (db *DB) PurgeDeleted(ctx context.Context, always bool) (bool, error) {
	if err := db.mergeKeywords(ctx); err != nil {
		return false, err
	}
	var last int64
	if err := db.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'text_changes'`).Scan(&last); err != nil {
		return false, err
	}
	db.purged.mu.Lock()
	defer db.purged.mu.Unlock()
	if last == db.purged.seq && !always {
		return false, nil
	}
	var busy, frames, checkpointed int
	if err := db.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &checkpointed); err != nil {
		return false, err
	}
	if busy != 0 {
		return false, errWALInUse
	}
	db.purged.seq = last
	return true, nil
}

// PurgeEvery runs PurgeDeleted a moment after every write that deletes or
// edits messages, and every interval (one that could not empty the WAL
// tries again then), until ctx ends.
func (db *DB) PurgeEvery(ctx context.Context, interval time.Duration, failed func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-db.purged.soon:
			select {
			case <-ctx.Done():
				return
			case <-time.After(purgeSoon):
			}
		}
		if _, err := db.PurgeDeleted(ctx, false); err != nil && ctx.Err() == nil {
			failed(err)
		}
	}
}
