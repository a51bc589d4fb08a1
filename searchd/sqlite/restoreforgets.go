package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// forgets is what a database was told to forget: the members who opted
// out, the IDs of deleted or forgotten messages (tombstones), deleted
// channels, the servers the bot left, and the text edits took away. A
// restore carries them from the database it replaces into the backup,
// which may predate them: restoring an old backup must not bring back
// what a member took away.
type forgets struct {
	optOuts [][2]int64 // user, at
	// authors were forgotten (searchd forget --author): user, at. Their
	// messages' tombstones come with the rest, their names and the
	// mentions of them with nothing else.
	authors    [][2]int64
	tombstones [][2]int64 // message, deleted_at
	channels   [][2]int64 // deleted on Discord: channel, deleted_at
	// leftGuilds are the servers the bot left (guild, left_at), which
	// leave no tombstones; nil with hasLeftGuilds false when the database
	// predates them.
	leftGuilds    [][2]int64
	hasLeftGuilds bool
	// path is the replaced database, read again for its edited messages
	// a thousand at a time (editsAfter): a backup holds the text before an
	// edit, and an edit may have taken text out.
	path string
	// version is the replaced database's index_version: the restored one
	// goes past it, so no cursor made before the restore pages after it.
	version int64
}

// readForgets reads the opt-outs and tombstones of the database file at
// path (a database from before opt-outs existed has none of them).
func readForgets(ctx context.Context, path string) (forgets, error) {
	var f forgets
	// Read-only: the file and its WAL stay as they are, to be kept.
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return f, err
	}
	defer db.Close()
	read := func(table, query string, into *[][2]int64) error {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil || n == 0 {
			return err
		}
		rows, err := db.QueryContext(ctx, query)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r [2]int64
			if err := rows.Scan(&r[0], &r[1]); err != nil {
				return err
			}
			*into = append(*into, r)
		}
		return rows.Err()
	}
	if err := read("opt_outs", `SELECT user_id, at FROM opt_outs`, &f.optOuts); err != nil {
		return f, err
	}
	if err := read("forgotten_authors", `SELECT user_id, at FROM forgotten_authors`, &f.authors); err != nil {
		return f, err
	}
	if err := read("deleted_channels", `SELECT channel_id, deleted_at FROM deleted_channels`, &f.channels); err != nil {
		return f, err
	}
	// Every schema has meta's index_version (migration 0003 on).
	if err := db.QueryRowContext(ctx, `SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'index_version'), 0)`).Scan(&f.version); err != nil {
		return f, err
	}
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'left_guilds'`).Scan(&f.hasLeftGuilds); err != nil {
		return f, err
	}
	if err := read("left_guilds", `SELECT guild_id, left_at FROM left_guilds`, &f.leftGuilds); err != nil {
		return f, err
	}
	f.path = path
	if _, err := editsAfter(ctx, db, 0, 1); err != nil { // readable: before the copy is touched
		return f, err
	}
	return f, read("tombstones", `SELECT message_id, deleted_at FROM tombstones`, &f.tombstones)
}

// editsAfter reads up to limit edited messages, as stored, of IDs above
// after, in ID order, as partial updates: applied over a copy, each
// replaces the text of a message the copy holds at an older edit, and
// stores nothing the copy lacks (no author).
func editsAfter(ctx context.Context, db *sql.DB, after int64, limit int) ([]searchd.Message, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, channel_id, created_at, edited_at, content, type, COALESCE(reply_to_id, 0), attachments,
			COALESCE((SELECT group_concat(mm.user_id) FROM message_mentions mm WHERE mm.message_id = messages.id), '')
		FROM messages WHERE edited_at IS NOT NULL AND id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []searchd.Message
	for rows.Next() {
		m := searchd.Message{Partial: true}
		var mentions string
		if err := rows.Scan(&m.ID, &m.ChannelID, &m.CreatedAt, &m.EditedAt, &m.Content, &m.Type, &m.ReplyToID, &m.Attachments, &mentions); err != nil {
			return nil, err
		}
		m.Mentions = splitIDs(mentions)
		out = append(out, m)
	}
	return out, rows.Err()
}

// applyForgets makes db forget what f names: every edit is applied over
// the older text (as a live edit), every opt-out is recorded and its
// author forgotten (as OptOut), every tombstone recorded with its time and
// the message it names deleted (as a deletion), every channel deleted on
// Discord forgotten for good (as ForgetDeletedChannels, its threads the
// copy holds with it), and the servers the bot left are those the
// replaced database left, forgotten (as ForgetLeftGuild; one the bot was
// added back to since the backup is let in again). Opt-outs are a union:
// one taken back after the backup was made stays until the member opts in
// again, the safe side of the two.
func (db *DB) applyForgets(ctx context.Context, f forgets, rules segment.Rules) error {
	var authors [][2]int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = CAST(MAX(CAST(value AS INTEGER), ?) + 1 AS TEXT) WHERE key = 'index_version'`, f.version); err != nil {
			return err
		}
		if err := raiseCursorFloor(ctx, tx); err != nil {
			return err
		}
		for _, o := range f.optOuts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO opt_outs (user_id, at) VALUES (?, ?) ON CONFLICT DO NOTHING`, o[0], o[1]); err != nil {
				return err
			}
		}
		// An author forgotten since the backup was made (its row older,
		// or none) is forgotten again, names and mentions with it.
		for _, a := range f.authors {
			var at int64
			err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT at FROM forgotten_authors WHERE user_id = ?), 0)`, a[0]).Scan(&at)
			if err != nil {
				return err
			}
			if at < a[1] {
				authors = append(authors, a)
			}
		}
		for _, t := range f.tombstones {
			if _, err := tx.ExecContext(ctx, `INSERT INTO tombstones (message_id, deleted_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, t[0], t[1]); err != nil {
				return err
			}
		}
		if !f.hasLeftGuilds {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM left_guilds`); err != nil {
			return err
		}
		for _, g := range f.leftGuilds {
			if _, err := tx.ExecContext(ctx, `INSERT INTO left_guilds (guild_id, left_at) VALUES (?, ?)`, g[0], g[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Before the edits: an edit since the forget carries the mentions its
	// newer text has.
	for _, a := range authors {
		if _, err := db.Forget(ctx, ForgetFilter{Author: a[0]}, rules); err != nil {
			return err
		}
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		for _, a := range authors { // the forget's own time, not the restore's
			if _, err := tx.ExecContext(ctx, `INSERT INTO forgotten_authors (user_id, at) VALUES (?, ?)
				ON CONFLICT DO UPDATE SET at = excluded.at`, a[0], a[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := db.carryEdits(ctx, f.path, rules); err != nil {
		return err
	}
	stored, err := db.storedAmong(ctx, f.tombstones)
	if err != nil {
		return err
	}
	for len(stored) > 0 {
		chunk := stored[:min(len(stored), 5000)]
		stored = stored[len(chunk):]
		if _, err := db.Apply(ctx, &searchd.Batch{Deletes: chunk}, rules, nil); err != nil {
			return err
		}
	}
	for _, o := range f.optOuts {
		if _, err := db.Forget(ctx, ForgetFilter{Author: o[0]}, rules); err != nil {
			return err
		}
	}
	if len(f.channels) > 0 {
		var ids []int64
		for _, c := range f.channels {
			ids = append(ids, c[0])
		}
		ids, err := db.WithTheirThreads(ctx, ids)
		if err != nil {
			return err
		}
		if _, err := db.ForgetDeletedChannels(ctx, ids, rules); err != nil {
			return err
		}
	}
	for _, g := range f.leftGuilds {
		if _, err := db.ForgetLeftGuild(ctx, g[0], rules); err != nil {
			return err
		}
	}
	// The backup's keyword index still holds what was forgotten since.
	_, err = db.PurgeDeleted(ctx, true)
	return err
}

// carryEdits applies the edits of the database at path (none: no path),
// a thousand at a time, so that a restore's memory does not grow with
// the history's edits.
func (db *DB) carryEdits(ctx context.Context, path string, rules segment.Rules) error {
	if path == "" {
		return nil
	}
	replaced, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer replaced.Close()
	for after := int64(math.MinInt64); ; {
		chunk, err := editsAfter(ctx, replaced, after, 1000)
		if err != nil || len(chunk) == 0 {
			return err
		}
		res, err := db.Apply(ctx, &searchd.Batch{Messages: chunk}, rules, nil)
		if err != nil {
			return err
		}
		if err := db.carryMentions(ctx, chunk, res.UpdatedIDs); err != nil {
			return err
		}
		after = chunk[len(chunk)-1].ID
	}
}

// carryMentions gives the messages an edit carried (updated) the
// mentions of their newer text: a partial update keeps the copy's, and
// one the edit took out is a trace of what it removed.
func (db *DB) carryMentions(ctx context.Context, chunk []searchd.Message, updated []int64) error {
	if len(updated) == 0 {
		return nil
	}
	carried := map[int64]bool{}
	for _, id := range updated {
		carried[id] = true
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, m := range chunk {
			if !carried[m.ID] {
				continue
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM message_mentions WHERE message_id = ?`, m.ID); err != nil {
				return err
			}
			for _, u := range m.Mentions {
				if _, err := tx.ExecContext(ctx, qMention, m.ID, u, m.ChannelID, m.CreatedAt); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// storedAmong returns the IDs of rows (first column) that name a stored
// message.
func (db *DB) storedAmong(ctx context.Context, rows [][2]int64) ([]int64, error) {
	var out []int64
	for len(rows) > 0 {
		chunk := rows[:min(len(rows), 500)]
		rows = rows[len(chunk):]
		args := make([]any, len(chunk))
		for i, r := range chunk {
			args[i] = r[0]
		}
		q := `SELECT id FROM messages WHERE id IN (?` + strings.Repeat(`,?`, len(chunk)-1) + `)`
		res, err := db.db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		for res.Next() {
			var id int64
			if err := res.Scan(&id); err != nil {
				res.Close()
				return nil, err
			}
			out = append(out, id)
		}
		res.Close()
		if err := res.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// carryForgets applies the forgets of the database at current (if there
// is one) to the checked backup copy at copyPath, and leaves the copy a
// single file again (its WAL checkpointed into it), ready to take the
// database's name.
func carryForgets(ctx context.Context, current, copyPath string, rules segment.Rules) error {
	if !exists(current) {
		return nil
	}
	f, err := readForgets(ctx, current)
	if err != nil {
		return fmt.Errorf("the database being replaced cannot be read for its opt-outs and deletions, which the restored one must keep (%w); "+
			"to restore without them, move %s (with its -wal and -shm) out of the data directory first", err, current)
	}
	db, err := openFile(ctx, copyPath)
	if err != nil {
		return err
	}
	if err := db.applyForgets(ctx, f, rules); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	// Out of WAL mode: the checkpoint puts every change in the file
	// itself, and the -wal goes (the rename moves only the file).
	one, err := sql.Open("sqlite", "file:"+copyPath)
	if err != nil {
		return err
	}
	defer one.Close()
	return outOfWAL(ctx, one)
}

// outOfWAL takes the restored copy out of WAL mode: every change is in
// the file itself, which alone takes the database's name.
func outOfWAL(ctx context.Context, db *sql.DB) error {
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode=DELETE`).Scan(&mode); err != nil {
		return err
	}
	if mode != "delete" {
		return fmt.Errorf("the restored copy stays in %s mode", mode)
	}
	return nil
}
