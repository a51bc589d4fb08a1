package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"regexp"
)

// An import's progress is kept per export file (imports), under a digest
// of its path: DiscordChatExporter names a file by its server, category
// and channel ("Server - Category - channel [ID].json"), and those names
// must leave the file with a deleted channel or a server the bot left,
// as their rows do. A digest still confirms a guessed path, so the row
// names its channel and server (saveCheckpoint) and is deleted with them
// (ForgetDeletedChannels, ForgetLeftGuild).

const importKeyPrefix = "sha256:"

// importKey is the key path's progress is kept under.
func importKey(path string) string {
	sum := sha256.Sum256([]byte(path))
	return importKeyPrefix + hex.EncodeToString(sum[:])
}

// exportChannelRE is the channel ID in an export's file name ("Server -
// Category - channel [ID].json", "… [ID] [part 2].json").
var exportChannelRE = regexp.MustCompile(`\[(\d{1,20})\](?: \[part \d+\])?\.json$`)

// hashImportPaths puts the progress an older searchd kept under plain
// paths under their digests, once, at open.
func (db *DB) hashImportPaths(ctx context.Context) error {
	paths, err := queryStrings(ctx, db.db, `SELECT path FROM imports WHERE path NOT LIKE '`+importKeyPrefix+`%'`)
	if err != nil || len(paths) == 0 {
		return err
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		for _, p := range paths {
			// Its channel, from the name DiscordChatExporter gave the
			// file, and that channel's server: so that it leaves with them
			// (saveCheckpoint), or goes now if they are gone already.
			var ch any
			if m := exportChannelRE.FindStringSubmatch(p); m != nil {
				ch = m[1]
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO imports (path, size, mtime, messages_done, complete, updated_at, channel_id, guild_id)
				SELECT ?1, size, mtime, messages_done, complete, updated_at, ?3, (SELECT guild_id FROM channels WHERE id = ?3)
				FROM imports WHERE path = ?2
				ON CONFLICT (path) DO NOTHING`, importKey(p), p, ch); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM imports WHERE path = ?1 AND (
				channel_id IN (SELECT channel_id FROM deleted_channels)
				OR channel_id IN (SELECT id FROM channels WHERE kind LIKE '%Thread' AND parent_id IN (SELECT channel_id FROM deleted_channels))
				OR guild_id IN (SELECT guild_id FROM left_guilds))`, importKey(p)); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM imports WHERE path = ?`, p); err != nil {
				return err
			}
		}
		return nil
	})
	db.purged.textTakenOut() // the plain paths, from the WAL too
	return err
}
