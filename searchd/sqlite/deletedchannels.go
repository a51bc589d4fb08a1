package sqlite

import (
	"context"
	"database/sql"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// ForgetDeletedChannels forgets channels and threads deleted on Discord as
// Forget does, and for good: their IDs are kept in deleted_channels, so no
// later batch or import stores anything of them or of their threads again,
// and their rows (names, topics) and backfill checkpoints are removed. The
// caller names the threads it knows; one it does not is caught by its
// parent. It returns the number of messages deleted.
func (db *DB) ForgetDeletedChannels(ctx context.Context, ids []int64, rules segment.Rules) (int, error) {
	now := time.Now().UnixMicro()
	if err := db.write(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `INSERT INTO deleted_channels (channel_id, deleted_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, now); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		forgot, err := db.Forget(ctx, ForgetFilter{Channel: id}, rules)
		n += forgot
		if err != nil {
			return n, err
		}
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			for _, q := range []string{`DELETE FROM backfill WHERE channel_id = ?`,
				// Its exports' progress, and its threads': their keys confirm
				// a guessed name (importkeys.go).
				`DELETE FROM imports WHERE channel_id = ?1 OR channel_id IN
					(SELECT id FROM channels WHERE parent_id = ?1 AND kind LIKE '%Thread')`,
				`DELETE FROM channels WHERE id = ? AND NOT EXISTS (SELECT 1 FROM messages WHERE channel_id = channels.id)
					AND NOT EXISTS (SELECT 1 FROM segments WHERE channel_id = channels.id)`} {
				if _, err := tx.ExecContext(ctx, q, id); err != nil {
					return err
				}
			}
		}
		return nil
	})
	db.purged.textTakenOut() // the channels' names and topics
	return n, err
}

// withoutDeletedChannels is b less the channels deleted on Discord, their
// threads and their messages (counted in skipped): a page fetched before a
// deletion and posted after it stores nothing of what was deleted.
func (a *applier) withoutDeletedChannels(b *searchd.Batch) (*searchd.Batch, int, error) {
	deleted := map[int64]bool{}
	if err := addIDs(a.ctx, a.tx, deleted, `SELECT channel_id FROM deleted_channels`); err != nil {
		return nil, 0, err
	}
	if len(deleted) == 0 {
		return b, 0, nil
	}
	// A thread's parent, by the batch's word first, then the stored
	// row's. Only a thread's: a category's channels outlive it, and a
	// batch's placeholder entry (no parent) says nothing.
	parent := map[int64]int64{}
	for _, c := range b.Channels {
		if c.ParentID != 0 && searchd.IsThread(c.Kind) {
			parent[c.ID] = c.ParentID
		}
	}
	gone := func(ch int64) (bool, error) {
		if deleted[ch] {
			return true, nil
		}
		p, ok := parent[ch]
		if !ok {
			row, err := a.queryRow(`SELECT COALESCE(parent_id, 0) FROM channels WHERE id = ? AND kind LIKE '%Thread'`, ch)
			if err != nil {
				return false, err
			}
			if err := row.Scan(&p); err != nil && err != sql.ErrNoRows {
				return false, err
			}
			parent[ch] = p
		}
		return p != 0 && deleted[p], nil
	}
	return withoutChannels(b, gone)
}

// withoutChannels is b less the channels gone says are gone and their
// messages (counted in skipped).
func withoutChannels(b *searchd.Batch, gone func(channel int64) (bool, error)) (*searchd.Batch, int, error) {
	out := *b
	out.Channels, out.Messages = nil, nil
	for _, c := range b.Channels {
		if g, err := gone(c.ID); err != nil {
			return nil, 0, err
		} else if !g {
			out.Channels = append(out.Channels, c)
		}
	}
	skipped := 0
	for _, m := range b.Messages {
		if g, err := gone(m.ChannelID); err != nil {
			return nil, 0, err
		} else if g {
			skipped++
		} else {
			out.Messages = append(out.Messages, m)
		}
	}
	return &out, skipped, nil
}
