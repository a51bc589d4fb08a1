package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
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

// hashImportPaths puts the progress an older searchd kept under plain
// paths under their digests, once, at open.
func (db *DB) hashImportPaths(ctx context.Context) error {
	paths, err := queryStrings(ctx, db.db, `SELECT path FROM imports WHERE path NOT LIKE '`+importKeyPrefix+`%'`)
	if err != nil || len(paths) == 0 {
		return err
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		for _, p := range paths {
			if _, err := tx.ExecContext(ctx, `INSERT INTO imports (path, size, mtime, messages_done, complete, updated_at)
				SELECT ?, size, mtime, messages_done, complete, updated_at FROM imports WHERE path = ?
				ON CONFLICT (path) DO NOTHING`, importKey(p), p); err != nil {
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
