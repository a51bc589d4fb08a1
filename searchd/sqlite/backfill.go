package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"
)

// Backfill is the bot's progress through one channel's history.
type Backfill struct {
	ChannelID int64
	BeforeID  int64 // oldest message reached; 0 when not started
	Complete  bool  // the channel's first message was reached
	NewestID  int64 // newest stored message of the channel, for catching up
}

// Backfill returns a channel's backfill checkpoint and newest message:
// the newest at or before message through when through is not 0, so
// that what arrived after it (live messages) cannot hide a hole below it.
func (db *DB) Backfill(ctx context.Context, channel, through int64) (*Backfill, error) {
	b := &Backfill{ChannelID: channel}
	err := db.db.QueryRowContext(ctx, `SELECT before_id, complete FROM backfill WHERE channel_id = ?`, channel).
		Scan(&b.BeforeID, &b.Complete)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if through != 0 {
		// Down messages_channel_time from the channel's newest: past only
		// the few stored after through.
		err = db.db.QueryRowContext(ctx, `SELECT id FROM messages WHERE channel_id = ? AND id <= ?
			ORDER BY created_at DESC, id DESC LIMIT 1`, channel, through).Scan(&b.NewestID)
	} else {
		err = db.db.QueryRowContext(ctx, `SELECT id FROM messages WHERE channel_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`, channel).Scan(&b.NewestID)
	}
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return b, err
}

// SetBackfill records a channel's backfill checkpoint.
func (db *DB) SetBackfill(ctx context.Context, b *Backfill) error {
	return db.writeAside(ctx, "FULL", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO backfill (channel_id, before_id, complete, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (channel_id) DO UPDATE SET before_id = excluded.before_id, complete = excluded.complete,
			updated_at = excluded.updated_at`, b.ChannelID, b.BeforeID, b.Complete, time.Now().UnixMicro())
		return err
	})
}

// MessageIDs lists, ascending, at most limit IDs of a channel's stored
// messages from from to to (inclusive): what the bot compares a page of
// Discord's history with to find the messages deleted there.
func (db *DB) MessageIDs(ctx context.Context, channel, from, to int64, limit int) ([]int64, error) {
	// A snowflake holds its creation time: the time range (with a margin
	// for clocks) keeps the search inside the channel's index.
	at := func(id int64, margin int64) int64 { return ((id>>22)+discordEpochMillis)*1000 + margin }
	ids, err := queryIDs(ctx, db.db, `SELECT id FROM messages WHERE channel_id = ? AND created_at BETWEEN ? AND ?
		AND id BETWEEN ? AND ? ORDER BY id LIMIT ?`,
		channel, at(from, -timeMarginMicros), at(to, timeMarginMicros), from, to, limit)
	if ids == nil && err == nil {
		ids = []int64{} // a JSON array, never null, for the API
	}
	return ids, err
}

const (
	discordEpochMillis = 1420070400000
	timeMarginMicros   = int64(time.Hour / time.Microsecond)
)

// ChannelsOf lists the stored channels of a guild (parent 0) or the
// threads of a channel (not the channels of a category: deleting a
// category leaves them).
func (db *DB) ChannelsOf(ctx context.Context, guild, parent int64) ([]int64, error) {
	q, arg := `SELECT id FROM channels WHERE guild_id = ?`, guild
	if parent != 0 {
		q, arg = `SELECT id FROM channels WHERE parent_id = ? AND kind LIKE '%Thread'`, parent
	}
	return queryIDs(ctx, db.db, q, arg)
}

// WithTheirThreads is chans with every thread of each (private ones too,
// and threads whose rows name no guild), as forgetting a channel needs.
func (db *DB) WithTheirThreads(ctx context.Context, chans []int64) ([]int64, error) {
	out := slices.Clone(chans)
	for _, c := range chans {
		threads, err := db.ChannelsOf(ctx, 0, c)
		if err != nil {
			return nil, err
		}
		for _, t := range threads {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}
