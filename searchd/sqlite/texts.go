package sqlite

import (
	"context"
	"database/sql"

	"dsearch/searchd/lexical"
)

// spokenTypes are the message types people (or a bot answering a
// command) said, as SQL: segment.IsSystem's complement. Discord's notices
// (joins, calls, pins, thread starts, renames) stay stored and shown as
// history, but are kept out of the keyword index, embedding text and
// catch-up, and never make a search hit.
const spokenTypes = `('Default', 'Reply', 'ChatInputCommand', 'ContextMenuCommand', '20', '23')`

// TextState is where the stored text stands, for the in-memory keyword
// index: the last text_changes entry, the import epoch, the index version.
type TextState struct {
	Seq, Epoch, Version int64
}

// TextState reads the current state (every keyword search asks: the
// statement is prepared once).
func (db *DB) TextState(ctx context.Context) (TextState, error) {
	st, err := db.prepared(ctx, textStateQuery)
	if err != nil {
		return TextState{}, err
	}
	return scanTextState(st.QueryRowContext(ctx))
}

const textStateQuery = `SELECT (SELECT COALESCE(MAX(seq), 0) FROM text_changes),
	COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'text_epoch'), 0),
	COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'index_version'), 0)`

func scanTextState(row *sql.Row) (TextState, error) {
	var st TextState
	err := row.Scan(&st.Seq, &st.Epoch, &st.Version)
	return st, err
}

// ScanTexts calls fn for every spoken message, as the in-memory keyword index
// keeps it, and returns the state the scan is current to: both are read
// in one transaction, so later changes come from TextChanges.
func (db *DB) ScanTexts(ctx context.Context, fn func(lexical.Doc)) (TextState, error) {
	tx, err := db.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return TextState{}, err
	}
	defer tx.Rollback()
	st, err := scanTextState(tx.QueryRowContext(ctx, textStateQuery))
	if err != nil {
		return st, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, channel_id, author_id, created_at, content FROM messages m WHERE `+spoken)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		var d lexical.Doc
		if err := rows.Scan(&d.ID, &d.ChannelID, &d.AuthorID, &d.CreatedAt, &d.Content); err != nil {
			return st, err
		}
		fn(d)
	}
	return st, rows.Err()
}

// TextChanges returns the messages changed after seq (each once), the ones
// still stored (and spoken) with their current text, and the sequence they
// are current to.
func (db *DB) TextChanges(ctx context.Context, seq int64) (changed []lexical.Doc, deleted []int64, upTo int64, err error) {
	tx, err := db.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, nil, 0, err
	}
	defer tx.Rollback()
	upTo = seq
	rows, err := tx.QueryContext(ctx, `SELECT c.message_id, MAX(c.seq), m.id IS NOT NULL AND `+spoken+`, m.channel_id, m.author_id,
		m.created_at, m.content FROM text_changes c LEFT JOIN messages m ON m.id = c.message_id
		WHERE c.seq > ? GROUP BY c.message_id`, seq)
	if err != nil {
		return nil, nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, last int64
		var exists bool
		var ch, author, created sql.NullInt64
		var content sql.NullString
		if err := rows.Scan(&id, &last, &exists, &ch, &author, &created, &content); err != nil {
			return nil, nil, 0, err
		}
		upTo = max(upTo, last)
		if !exists {
			deleted = append(deleted, id)
			continue
		}
		changed = append(changed, lexical.Doc{ID: id, ChannelID: ch.Int64, AuthorID: author.Int64,
			CreatedAt: created.Int64, Content: content.String})
	}
	return changed, deleted, upTo, rows.Err()
}

// TrimTextChanges forgets the changes up to seq, once the index has them.
func (db *DB) TrimTextChanges(ctx context.Context, seq int64) error {
	return db.writeAside(ctx, "NORMAL", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM text_changes WHERE seq <= ?`, seq)
		return err
	})
}
