package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Backfill is the bot's progress through one channel's history.
type Backfill struct {
	ChannelID int64
	BeforeID  int64 // oldest message reached; 0 when not started
	Complete  bool  // the channel's first message was reached
	NewestID  int64 // newest stored message of the channel, for catching up
}

// Backfill returns a channel's backfill checkpoint and newest message.
func (db *DB) Backfill(ctx context.Context, channel int64) (*Backfill, error) {
	b := &Backfill{ChannelID: channel}
	err := db.db.QueryRowContext(ctx, `SELECT before_id, complete FROM backfill WHERE channel_id = ?`, channel).
		Scan(&b.BeforeID, &b.Complete)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	err = db.db.QueryRowContext(ctx, `SELECT id FROM messages WHERE channel_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`, channel).Scan(&b.NewestID)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return b, err
}

// SetBackfill records a channel's backfill checkpoint.
func (db *DB) SetBackfill(ctx context.Context, b *Backfill) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO backfill (channel_id, before_id, complete, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (channel_id) DO UPDATE SET before_id = excluded.before_id, complete = excluded.complete,
			updated_at = excluded.updated_at`, b.ChannelID, b.BeforeID, b.Complete, time.Now().UnixMicro())
		return err
	})
}
