package sqlite

import (
	"context"
	"database/sql"
	"time"

	"dsearch/searchd/segment"
)

// OptOut leaves a member out of the index: it records them first, so that
// nothing of theirs applied from then on is stored, then forgets what is
// stored (as Forget with Author: messages, tombstones kept, and every name
// they were seen under). It returns the number of messages forgotten.
// Opting out twice forgets whatever slipped in between, which is nothing.
func (db *DB) OptOut(ctx context.Context, user int64, rules segment.Rules) (int, error) {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO opt_outs (user_id, at) VALUES (?, ?) ON CONFLICT DO NOTHING`,
			user, time.Now().UnixMicro())
		return err
	})
	if err != nil {
		return 0, err
	}
	n, err := db.Forget(ctx, ForgetFilter{Author: user}, rules)
	if err != nil {
		return n, err
	}
	_, err = db.PurgeDeleted(ctx, true) // gone from the files now
	return n, err
}

// OptIn undoes OptOut for what is posted from now on; the messages
// forgotten stay forgotten. It reports whether the member had opted out.
func (db *DB) OptIn(ctx context.Context, user int64) (bool, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM opt_outs WHERE user_id = ?`, user)
		if err == nil {
			n, err = r.RowsAffected()
		}
		return err
	})
	return n > 0, err
}

// OptedOut reports whether a member has opted out.
func (db *DB) OptedOut(ctx context.Context, user int64) (bool, error) {
	var n int
	err := db.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM opt_outs WHERE user_id = ?)`, user).Scan(&n)
	return n == 1, err
}

// OptOuts counts the members who have opted out (doctor says how many,
// never who).
func (db *DB) OptOuts(ctx context.Context) (int64, error) {
	var n int64
	err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM opt_outs`).Scan(&n)
	return n, err
}

// optedOut returns the members who have opted out, within a transaction.
func optedOut(ctx context.Context, tx *sql.Tx) (map[int64]bool, error) {
	out := map[int64]bool{}
	return out, addIDs(ctx, tx, out, `SELECT user_id FROM opt_outs`)
}
