package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// What is deleted is gone from the files too. A deleted or edited
// message's row is zeroed as it goes (secure_delete, db.go) and its words
// leave the keyword index's pages in the same write (FTS5's
// secure-delete, migration 0022). Two traces are left, and PurgeDeleted
// takes them out:
//   - the WAL keeps pages as they were before the write, until it is
//     checkpointed and emptied (seconds after the write, under serve);
//   - the index's page keys (messages_fts_idx) hold a prefix of the first
//     word of each of its 4 kB pages, as it was when the page was
//     written: secure-delete leaves them. Only writing the index anew
//     takes them out (rewriteKeywords: about 1 s at 650,000 messages,
//     24 s at 6.5 M: docs/design.md), so it is done at once for an
//     opt-out, a forget or a restore, and under serve within
//     keywordsRewriteEvery of a deletion or an edit.

// keywordsRewriteEvery bounds how long a deleted word may stay as one of
// the keyword index's page keys under serve (about one word in a few
// hundred of those deleted).
const keywordsRewriteEvery = time.Hour

// errWALInUse: a reader held an older snapshot, so the WAL could not be
// emptied; the next purge tries again.
var errWALInUse = errors.New("the WAL is in use by a reader")

// purged is where this process's purges stand: the count of messages
// unindexed (unindexedCounts) when the WAL was last emptied, and when the
// keyword index was last written anew.
type purged struct {
	mu        sync.Mutex
	unindexed int64
	rewroteAt time.Time
	// soon: a write deleted or edited a message, or forgot a channel's,
	// a server's or a member's names (textTakenOut); PurgeEvery purges a
	// moment later instead of at its next tick. dirty: the WAL holds
	// what such a write took out.
	soon  chan struct{}
	dirty atomic.Bool
	// bulk counts the bulk forgets running in this process
	// (startBulkForget), which write the keyword index anew at their end.
	bulk atomic.Int32
}

// purgeSoon is how long PurgeEvery lets a burst of deletions land before
// it purges.
const purgeSoon = 2 * time.Second

// textTakenOut tells PurgeEvery that a write took text out.
func (p *purged) textTakenOut() {
	p.dirty.Store(true)
	select {
	case p.soon <- struct{}{}:
	default: // one is waiting already
	}
}

// Forgetting many messages at once (a channel, a server, an author) takes
// their words out of the keyword index in bulk. secure-delete removes each
// message's words from the index's pages one by one (about 1 ms a
// message at 650,000 messages: 110 s for a channel of 81,250, against 20 s
// before it), where writing the index anew (rewriteKeywords) removes
// every word deletions marked in one pass. So a large forget turns
// secure-delete off while it deletes, and writes the index anew at its
// end; a forget cut short is finished at the next open or purge
// (keywords_unmerged).
const bulkForget = 5000

// startBulkForget turns secure-delete off for a bulk forget, until the
// forget's mergeKeywords, and counts it running until end is called.
func (db *DB) startBulkForget(ctx context.Context) (end func(), err error) {
	db.purged.bulk.Add(1)
	if err := db.write(ctx, func(tx *sql.Tx) error { return unmergeKeywords(ctx, tx) }); err != nil {
		db.purged.bulk.Add(-1)
		return nil, err
	}
	return func() { db.purged.bulk.Add(-1) }, nil
}

// unmergeKeywords turns secure-delete off until mergeKeywords.
func unmergeKeywords(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 0)`); err != nil {
		return err
	}
	return setMeta(ctx, tx, "keywords_unmerged", "1")
}

// mergeKeywords writes the keyword index anew, if a bulk forget left it
// unmerged, and turns secure-delete back on.
func (db *DB) mergeKeywords(ctx context.Context) error {
	if v, err := db.Meta(ctx, "keywords_unmerged"); err != nil || v == "" {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error { return rewriteKeywords(ctx, tx) })
}

// execer is a database, a transaction or a connection.
type execer interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

// unindexedCounts returns how many messages' words have left the keyword index
// (deleted or edited: logUnindexed), and that count when the index was
// last written anew.
func unindexedCounts(ctx context.Context, q execer) (last, rewritten int64, err error) {
	err = q.QueryRowContext(ctx, `SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'text_removed'), 0),
		COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'keywords_rewritten'), 0)`).Scan(&last, &rewritten)
	return last, rewritten, err
}

// rewriteKeywords writes the keyword index anew, as one segment, which
// leaves no page key of a deleted word (and no word a bulk forget only
// marked), and records it. 'optimize' alone leaves an index of one
// segment as it is, so a row is added first, outside the messages'
// rowids, and taken out after.
func rewriteKeywords(ctx context.Context, q execer) error {
	last, _, err := unindexedCounts(ctx, q)
	if err != nil {
		return err
	}
	const mark = `'dsearch', ''`
	for _, stmt := range []string{
		`INSERT INTO messages_fts (messages_fts, rank) VALUES ('secure-delete', 1)`,
		`INSERT INTO messages_fts (rowid, text, bigrams) VALUES (-1, ` + mark + `)`,
		`INSERT INTO messages_fts (messages_fts) VALUES ('optimize')`,
		`INSERT INTO messages_fts (messages_fts, rowid, text, bigrams) VALUES ('delete', -1, ` + mark + `)`,
		`DELETE FROM meta WHERE key = 'keywords_unmerged'`,
		`INSERT INTO meta (key, value) VALUES ('keywords_rewritten', '` + strconv.FormatInt(last, 10) + `')
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
	} {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// PurgeDeleted takes out of the files what deleted and edited messages
// left (above): it empties the WAL when a message was deleted or edited
// since it last did (or names were forgotten: textTakenOut), or now, and
// writes the keyword index anew when one was since it last did and now,
// or keywordsRewriteEvery after this process last did, or a bulk forget
// was cut short; never under a bulk forget running in this process,
// which does at its end. What a member or the operator forgets by name
// (an opt-out, searchd forget) and a restore purge now; searchd serve's
// PurgeEvery runs it after every deletion or edit.
func (db *DB) PurgeDeleted(ctx context.Context, now bool) (bool, error) {
	unmerged, err := db.Meta(ctx, "keywords_unmerged") // a bulk forget cut short, or running
	if err != nil {
		return false, err
	}
	last, rewritten, err := unindexedCounts(ctx, db.db)
	if err != nil {
		return false, err
	}
	db.purged.mu.Lock()
	defer db.purged.mu.Unlock()
	rewrote := false
	if unmerged != "" || last > rewritten && (now || time.Since(db.purged.rewroteAt) >= keywordsRewriteEvery) {
		err := db.write(ctx, func(tx *sql.Tx) error {
			// A bulk forget running here writes the index anew at its
			// end; rewriteKeywords would turn secure-delete back on under
			// it. Asked under the write lock: one starting counts first.
			if db.purged.bulk.Load() > 0 {
				return nil
			}
			rewrote = true
			return rewriteKeywords(ctx, tx)
		})
		if err != nil {
			return false, err
		}
		if rewrote {
			db.purged.rewroteAt = time.Now()
		}
	}
	if !rewrote && last == db.purged.unindexed && !now && !db.purged.dirty.Load() {
		return false, nil
	}
	db.purged.dirty.Store(false) // before the checkpoint: a write after it sets it again
	var busy, frames, checkpointed int
	if err := db.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &checkpointed); err != nil {
		return false, err
	}
	if busy != 0 {
		db.purged.dirty.Store(true)
		return false, errWALInUse
	}
	db.purged.unindexed = last
	return true, nil
}

// PurgeEvery runs PurgeDeleted a moment after every write that deletes or
// edits messages, and every interval (one that could not empty the WAL,
// or a rewrite of the keyword index due, is done then), until ctx ends.
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
