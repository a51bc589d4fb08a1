package sqlite

import (
	"context"
	"database/sql"
	"errors"
)

// Gone reports, of the IDs given, the messages not stored, the authors
// who opted out or have no row left (forget --author removes it with
// their last message), and the channels deleted on Discord. One read
// transaction: a primary-key lookup per ID.
func (db *DB) Gone(ctx context.Context, messages, authors, channels []int64) (goneMsgs, goneAuthors, goneChans []int64, err error) {
	tx, err := db.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, nil, err
	}
	defer tx.Rollback()
	if goneMsgs, err = idsWhere(ctx, tx, `SELECT NOT EXISTS (SELECT 1 FROM messages WHERE id = ?1)`, messages); err != nil {
		return nil, nil, nil, err
	}
	if goneAuthors, err = idsWhere(ctx, tx, `SELECT EXISTS (SELECT 1 FROM opt_outs WHERE user_id = ?1) OR NOT EXISTS (SELECT 1 FROM users WHERE id = ?1)`, authors); err != nil {
		return nil, nil, nil, err
	}
	if goneChans, err = idsWhere(ctx, tx, `SELECT EXISTS (SELECT 1 FROM deleted_channels WHERE channel_id = ?1)`, channels); err != nil {
		return nil, nil, nil, err
	}
	return goneMsgs, goneAuthors, goneChans, nil
}

// EditedAfter reports, of the messages given with an edit time each (Unix
// microseconds, 0: not edited), those stored with a later one, and that
// stored time. A message no longer stored is Gone's to report.
func (db *DB) EditedAfter(ctx context.Context, ids, after []int64) (edited, at []int64, err error) {
	edited, at = []int64{}, []int64{}
	if len(ids) == 0 {
		return edited, at, nil
	}
	st, err := db.db.PrepareContext(ctx, `SELECT COALESCE(edited_at, 0) FROM messages WHERE id = ?`)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	for i, id := range ids {
		var t int64
		switch err := st.QueryRowContext(ctx, id).Scan(&t); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, nil, err
		case t > after[i]:
			edited, at = append(edited, id), append(at, t)
		}
	}
	return edited, at, nil
}

// Deleted reports, of the messages given, those deleted or forgotten:
// searchd holds their tombstone, and a batch bringing them back is
// skipped. One lookup per ID.
func (db *DB) Deleted(ctx context.Context, ids []int64) ([]int64, error) {
	return idsWhere(ctx, db.db, `SELECT EXISTS (SELECT 1 FROM tombstones WHERE message_id = ?1)`, ids)
}

// preparer is a database or a transaction.
type preparer interface {
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// idsWhere is those of ids for which q, a boolean of one ID (?1), holds:
// one lookup per ID.
func idsWhere(ctx context.Context, db preparer, q string, ids []int64) ([]int64, error) {
	out := []int64{}
	if len(ids) == 0 {
		return out, nil
	}
	st, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for _, id := range ids {
		var holds bool
		if err := st.QueryRowContext(ctx, id).Scan(&holds); err != nil {
			return nil, err
		}
		if holds {
			out = append(out, id)
		}
	}
	return out, nil
}

// ForgottenAuthors reports, of the users given, those searchd forget
// --author forgot, with the time (Unix microseconds) of the latest.
func (db *DB) ForgottenAuthors(ctx context.Context, ids []int64) (users, at []int64, err error) {
	users, at = []int64{}, []int64{}
	if len(ids) == 0 {
		return users, at, nil
	}
	st, err := db.db.PrepareContext(ctx, `SELECT at FROM forgotten_authors WHERE user_id = ?`)
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	for _, id := range ids {
		var t int64
		switch err := st.QueryRowContext(ctx, id).Scan(&t); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, nil, err
		default:
			users, at = append(users, id), append(at, t)
		}
	}
	return users, at, nil
}
