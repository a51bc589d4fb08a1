package sqlite

import (
	"context"
	"database/sql"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// ForgetLeftGuild forgets guild g, which the bot was removed from: the
// messages of its channels (threads included: the caller names them) go,
// without the tombstones a deletion leaves, and with their backfill
// checkpoints, so that if the bot is added back its history pass brings
// them back from Discord, which still has them. Until then g is kept in
// left_guilds and nothing of it is stored. It returns the number of
// messages forgotten.
func (db *DB) ForgetLeftGuild(ctx context.Context, g int64, channels []int64, rules segment.Rules) (int, error) {
	if err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO left_guilds (guild_id, left_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, g, time.Now().UnixMicro())
		return err
	}); err != nil {
		return 0, err
	}
	n := 0
	for _, ch := range channels {
		// No tombstones, in the deletes' own transactions: a crash between
		// the deletes and a later removal of their tombstones would have
		// kept the messages out for good.
		forgot, err := db.Forget(ctx, ForgetFilter{Channel: ch, Untombstoned: true}, rules)
		n += forgot
		if err != nil {
			return n, err
		}
		if err := db.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `DELETE FROM backfill WHERE channel_id = ?`, ch)
			return err
		}); err != nil {
			return n, err
		}
	}
	return n, nil
}

// withoutLeftGuilds is b less the channels and messages of the guilds the
// bot left (counted in skipped), unless b places the guild again: the bot
// was added back, and the guild leaves the list.
func (a *applier) withoutLeftGuilds(b *searchd.Batch) (*searchd.Batch, int, error) {
	left := map[int64]bool{}
	if err := addIDs(a.ctx, a.tx, left, `SELECT guild_id FROM left_guilds`); err != nil {
		return nil, 0, err
	}
	for _, g := range b.Guilds {
		if left[g.ID] {
			if _, err := a.exec(`DELETE FROM left_guilds WHERE guild_id = ?`, g.ID); err != nil {
				return nil, 0, err
			}
			delete(left, g.ID)
		}
	}
	if len(left) == 0 {
		return b, 0, nil
	}
	guildOf := map[int64]int64{}
	for _, c := range b.Channels {
		if c.GuildID != 0 { // a placeholder may name none
			guildOf[c.ID] = c.GuildID
		}
	}
	gone := func(ch int64) (bool, error) {
		g, ok := guildOf[ch]
		if !ok {
			row, err := a.queryRow(`SELECT guild_id FROM channels WHERE id = ?`, ch)
			if err != nil {
				return false, err
			}
			if err := row.Scan(&g); err != nil && err != sql.ErrNoRows {
				return false, err
			}
			guildOf[ch] = g
		}
		return left[g], nil
	}
	return withoutChannels(b, gone)
}
