package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// ForgetLeftGuild forgets guild g, which the bot was removed from: the
// messages of its channels and their threads go, without the tombstones a
// deletion leaves, and with their backfill checkpoints, so that if the bot
// is added back its history pass brings them back from Discord, which
// still has them. What members were called there goes too (their
// nicknames in g, and every name of a member seen nowhere else), and the
// names and topics of g and its channels: a nickname is one server's, and
// none of it may be listed or matched once the server is forgotten. Until
// the bot is back, g is kept in left_guilds and nothing of it is stored.
// It returns the number of messages forgotten.
func (db *DB) ForgetLeftGuild(ctx context.Context, g int64, rules segment.Rules) (int, error) {
	own, err := db.ChannelsOf(ctx, g, 0)
	if err != nil {
		return 0, err
	}
	channels, err := db.WithTheirThreads(ctx, own)
	if err != nil {
		return 0, err
	}
	authors, err := queryIDs(ctx, db.db, `SELECT DISTINCT author_id FROM messages WHERE channel_id IN (SELECT value FROM json_each(?))`, jsonIDs(channels))
	if err != nil {
		return 0, err
	}
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
	defer db.purged.textTakenOut() // the names
	return n, db.write(ctx, func(tx *sql.Tx) error {
		// The rows stay, named by nothing: a later batch of g is told
		// apart by its channels' guild (withoutLeftGuilds).
		for _, q := range []string{
			`DELETE FROM server_nicknames WHERE guild_id = ?1`,
			`DELETE FROM user_names WHERE guild_id = ?1`,
			`UPDATE guilds SET name = '' WHERE id = ?1`,
			`UPDATE channels SET name = '', topic = '' WHERE id IN (SELECT value FROM json_each(?2))`,
			// Its exports' progress: their keys confirm a guessed name
			// (importkeys.go).
			`DELETE FROM imports WHERE guild_id = ?1 OR channel_id IN (SELECT value FROM json_each(?2))`,
			// Members seen only there: every name they were seen under.
			`DELETE FROM user_names WHERE user_id IN (SELECT value FROM json_each(?3))
				AND NOT EXISTS (SELECT 1 FROM messages WHERE author_id = user_id)`,
			`DELETE FROM server_nicknames WHERE user_id IN (SELECT value FROM json_each(?3))
				AND NOT EXISTS (SELECT 1 FROM messages WHERE author_id = user_id)`,
			`UPDATE users SET name = '', display_name = '' WHERE id IN (SELECT value FROM json_each(?3))
				AND NOT EXISTS (SELECT 1 FROM messages WHERE author_id = users.id)`,
		} {
			if _, err := tx.ExecContext(ctx, q, g, jsonIDs(channels), jsonIDs(authors)); err != nil {
				return err
			}
		}
		return nil
	})
}

// withoutLeftGuilds is b less the channels and messages of the guilds the
// bot left (counted in skipped), unless b places the guild again: the bot
// was added back, and the guild leaves the list. Not an import's batch: an
// export places its guild too, and is no sign of the bot back (an older
// export, or one whose import ran while the bot was removed); its guild's
// name is left out with the rest.
func (a *applier) withoutLeftGuilds(b *searchd.Batch) (*searchd.Batch, int, error) {
	left := map[int64]bool{}
	if err := addIDs(a.ctx, a.tx, left, `SELECT guild_id FROM left_guilds`); err != nil {
		return nil, 0, err
	}
	if a.imported && len(left) > 0 {
		out := *b
		out.Guilds = slices.DeleteFunc(slices.Clone(b.Guilds), func(g searchd.Guild) bool { return left[g.ID] })
		b = &out
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
