package sqlite

import (
	"context"
	"database/sql"
)

// Which segment each message belongs to, for an in-memory copy
// (index.Memberships) that follows the membership_changes log: the
// applier logs the memberships it makes (logMemberships; placing is the
// only writer that inserts them) and triggers on message_segments log
// moves and removals, whoever makes them, so every writer is followed.

const membershipSeqQuery = `SELECT COALESCE(MAX(seq), 0) FROM membership_changes`

// MembershipSeq is the last entry of the membership log (every search with
// a keyword asks: the statement is prepared once).
func (db *DB) MembershipSeq(ctx context.Context) (int64, error) {
	st, err := db.prepared(ctx, membershipSeqQuery)
	if err != nil {
		return 0, err
	}
	var seq int64
	return seq, st.QueryRowContext(ctx).Scan(&seq)
}

// ScanMemberships calls fn for every message with a segment, in message ID
// order, and returns the log entry the scan is current to: both are read
// in one transaction, so later changes come from MembershipChanges.
func (db *DB) ScanMemberships(ctx context.Context, fn func(message, segment int64)) (seq int64, err error) {
	tx, err := db.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, membershipSeqQuery).Scan(&seq); err != nil {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT message_id, segment_id FROM message_segments ORDER BY message_id`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var m, s int64
		if err := rows.Scan(&m, &s); err != nil {
			return 0, err
		}
		fn(m, s)
	}
	return seq, rows.Err()
}

// MembershipChange is a message's segment from then on (0: none).
type MembershipChange struct {
	Seq, MessageID, SegmentID int64
}

// MembershipChanges returns the log's entries after seq, in order, each
// with its message's segment as stored now (0: none): an entry says
// which membership changed, not to what (migration 0013), so entries
// need not be logged in the order their changes were made.
func (db *DB) MembershipChanges(ctx context.Context, seq int64) ([]MembershipChange, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT c.seq, c.message_id, COALESCE(ms.segment_id, 0)
		FROM membership_changes c LEFT JOIN message_segments ms ON ms.message_id = c.message_id
		WHERE c.seq > ? ORDER BY c.seq`, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []MembershipChange
	for rows.Next() {
		var c MembershipChange
		if err := rows.Scan(&c.Seq, &c.MessageID, &c.SegmentID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// TrimMembershipChanges forgets the log's entries before seq, once the
// in-memory copy has them. The entry at seq stays: seq is a rowid, and
// the next entry's must come after it.
func (db *DB) TrimMembershipChanges(ctx context.Context, seq int64) error {
	return db.writeAside(ctx, "NORMAL", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM membership_changes WHERE seq < ?`, seq)
		return err
	})
}
