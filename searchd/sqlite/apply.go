package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// Checkpoint records an export file's progress in the same transaction as
// the batch that made it, so an import resumes exactly after a crash.
type Checkpoint struct {
	Path         string
	Size, MTime  int64
	MessagesDone int64
	Complete     bool
	// Channel is the export's channel and ExportedAt when it was exported
	// (µs; 0: unknown). An export older than one already imported for the
	// channel fills gaps but replaces nothing: not the text of a message
	// it holds unedited, not a guild's or channel's name.
	Channel, ExportedAt int64
	// Guild and Parent (the thread's channel or the channel's category;
	// 0: none) are the other places the export names: it renames one
	// only if no newer export named it (exportEvidence).
	Guild, Parent int64
}

// Apply writes a batch in one transaction: guilds, channels, authors and
// their names, new and edited messages, deletions. New messages are placed
// in segments as an in-order import would place them, whatever order they
// arrive in (placeFresh): incrementally when they follow the channel's
// latest, else by re-segmenting from the earliest of them as far as that
// changes anything. cp, if not nil, is saved in the same transaction, and
// then the commit is not synced (writeBulk); without one, Apply returns
// once the batch is durable. Texts
// over the limits of shared/api are cut first, in b (searchd.Batch.Bound).
func (db *DB) Apply(ctx context.Context, b *searchd.Batch, rules segment.Rules, cp *Checkpoint) (searchd.BatchResult, error) {
	level := "FULL" // acknowledged to a client: durable (write)
	if cp != nil {
		level = "NORMAL" // an import: it resumes from the last checkpoint on disk (writeBulk)
	}
	res, err := db.applyParts(ctx, level, []Part{{Batch: b, Checkpoint: cp}}, rules)
	return res[0], err
}

// Part is one export's share of an import's transaction: its messages
// and its progress (nil: a live batch).
type Part struct {
	Batch      *searchd.Batch
	Checkpoint *Checkpoint
}

// ApplyImport writes the parts of an import in one transaction, each as
// Apply writes a batch with its checkpoint, in order. An import of many
// channels hands it their messages of one stretch of time together, so
// that the tables keyed by message ID grow at their end, as one file's
// do, instead of taking a leaf page a message in between the other
// channels'. The commit is not synced (writeBulk): an import resumes from
// the last checkpoint on disk. It returns each part's result.
func (db *DB) ApplyImport(ctx context.Context, parts []Part, rules segment.Rules) ([]searchd.BatchResult, error) {
	return db.applyParts(ctx, "NORMAL", parts, rules)
}

func (db *DB) applyParts(ctx context.Context, level string, parts []Part, rules segment.Rules) ([]searchd.BatchResult, error) {
	truncated := make([]int, len(parts))
	for i, p := range parts {
		truncated[i] = p.Batch.Bound() // every way in passes here: nothing stored grows without bound
	}
	res := make([]searchd.BatchResult, len(parts))
	err := db.writeCarrying(ctx, level, true, func(tx *sql.Tx, c *carried) (*carried, error) {
		clear(res)
		a, err := newApplier(ctx, db, tx, rules, db.now().UnixMicro())
		if err != nil {
			return nil, err
		}
		defer a.close()
		a.resume(c)
		changed := false
		for i, p := range parts {
			a.imported = p.Checkpoint != nil
			if err := a.exportEvidence(p.Checkpoint); err != nil {
				return nil, err
			}
			if res[i], err = a.apply(p.Batch); err != nil {
				return nil, err
			}
			changed = changed || res[i].Changed()
		}
		if err := a.logChanges(changed); err != nil {
			return nil, err
		}
		for _, p := range parts {
			if err := a.saveCheckpoint(p.Checkpoint, p.Batch); err != nil {
				return nil, err
			}
		}
		return a.leave(), nil
	})
	for i := range res {
		res[i].Truncated = truncated[i]
		if err == nil && res[i].Deleted+res[i].Updated > 0 {
			db.purged.textTakenOut()
		}
	}
	return res, err
}

// saveCheckpoint records an export's progress, if cp is one.
func (a *applier) saveCheckpoint(cp *Checkpoint, b *searchd.Batch) error {
	if cp == nil {
		return nil
	}
	// None for an export of what is gone (a channel deleted, a thread's
	// parent deleted, a server left), imported again: it stored nothing,
	// and its key would confirm the guessed name again.
	parent := cp.Channel // a thread's channel, whose deletion takes it
	for _, c := range b.Channels {
		if c.ID == cp.Channel && c.ParentID != 0 && searchd.IsThread(c.Kind) {
			parent = c.ParentID
		}
	}
	var gone bool
	if err := a.tx.QueryRowContext(a.ctx, `SELECT EXISTS (SELECT 1 FROM deleted_channels WHERE channel_id IN (?, ?))
		OR EXISTS (SELECT 1 FROM left_guilds WHERE guild_id = ?)`, cp.Channel, parent, cp.Guild).Scan(&gone); err != nil {
		return err
	}
	if gone {
		return nil
	}
	// Its channel and server, so that it leaves with them (importkeys.go).
	_, err := a.exec(`INSERT INTO imports (path, size, mtime, messages_done, complete, updated_at, channel_id, guild_id)
		VALUES (?, ?, ?, ?, ?, ?, NULLIF(?, 0), NULLIF(?, 0))
		ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime,
			messages_done = excluded.messages_done, complete = excluded.complete, updated_at = excluded.updated_at,
			channel_id = COALESCE(excluded.channel_id, channel_id), guild_id = COALESCE(excluded.guild_id, guild_id)`,
		importKey(cp.Path), cp.Size, cp.MTime, cp.MessagesDone, cp.Complete, a.now, cp.Channel, cp.Guild)
	return err
}

// exportEvidence compares an import's export time with the newest one
// imported for its channel: older, the batch only fills gaps (a.older);
// newer, it becomes the newest. Names are judged place by place: an
// export of another channel, or of a thread, names the guild and the
// parent too, and an older one must not rename them (a.olderNames).
func (a *applier) exportEvidence(cp *Checkpoint) error {
	a.older, a.olderGuild = false, false
	clear(a.olderNames)
	if cp == nil || cp.Channel == 0 || cp.ExportedAt == 0 {
		return nil
	}
	key := fmt.Sprintf("exported_at:%d", cp.Channel)
	newest, _, err := a.meta(key)
	if err != nil {
		return err
	}
	if cp.ExportedAt < newest {
		a.older = true
	} else if err := setMeta(a.ctx, a.tx, key, fmt.Sprint(cp.ExportedAt)); err != nil {
		return err
	}
	for _, ch := range []int64{cp.Channel, cp.Parent} {
		if ch == 0 {
			continue
		}
		older, err := a.namedBefore(fmt.Sprintf("named_at:%d", ch), cp.ExportedAt,
			`SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'exported_at:' || ?`, ch)
		if err != nil {
			return err
		}
		a.olderNames[ch] = older
	}
	if cp.Guild != 0 {
		a.olderGuild, err = a.namedBefore(fmt.Sprintf("named_at:guild:%d", cp.Guild), cp.ExportedAt,
			`SELECT MAX(CAST(m.value AS INTEGER)) FROM channels c JOIN meta m ON m.key = 'exported_at:' || c.id WHERE c.guild_id = ?`, cp.Guild)
	}
	return err
}

// namedBefore reports whether a newer export than one of time at named
// the place of key, and records at as its newest otherwise. A database
// from before key was kept has only its channels' export times: legacy
// reads the newest of them, once.
func (a *applier) namedBefore(key string, at int64, legacy string, id int64) (bool, error) {
	newest, ok, err := a.meta(key)
	if err != nil {
		return false, err
	}
	if ok && at < newest {
		return true, nil
	}
	if !ok {
		var old sql.NullInt64
		if err := a.tx.QueryRowContext(a.ctx, legacy, id).Scan(&old); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, err
		}
		newest = old.Int64
	}
	return at < newest, setMeta(a.ctx, a.tx, key, fmt.Sprint(max(at, newest)))
}

// meta reads an integer of the meta table, and whether it is there.
func (a *applier) meta(key string) (int64, bool, error) {
	var v int64
	err := a.tx.QueryRowContext(a.ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return v, err == nil, err
}

// ImportState returns the recorded progress of an export file, or nil.
func (db *DB) ImportState(ctx context.Context, path string) (*Checkpoint, error) {
	cp := Checkpoint{Path: path}
	err := db.db.QueryRowContext(ctx, `SELECT size, mtime, messages_done, complete FROM imports WHERE path = ?`, importKey(path)).
		Scan(&cp.Size, &cp.MTime, &cp.MessagesDone, &cp.Complete)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return &cp, err
}

// StoredNotIn counts the stored messages of a channel created before
// the time before (µs) whose IDs are not in held, sorted: what a whole
// export of the channel lacks, deleted on Discord since it was stored
// (or filtered out of the export). An import never deletes them: it
// cannot tell which.
func (db *DB) StoredNotIn(ctx context.Context, channel, before int64, held []int64) (int64, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT id FROM messages WHERE channel_id = ? AND created_at < ? ORDER BY id`, channel, before)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n int64
	i := 0
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		for i < len(held) && held[i] < id {
			i++
		}
		if i == len(held) || held[i] != id {
			n++
		}
	}
	return n, rows.Err()
}

// applier holds one transaction's statements and the segments it
// touches. Only the linker's windows and the names it read outlive the
// transaction (carried), and only once it commits, so a rollback leaves
// no stale cache behind.
type applier struct {
	ctx   context.Context
	db    *DB // its prepared statements; nil: prepare in tx
	tx    *sql.Tx
	rules segment.Rules
	now   int64

	tombstones bool // any tombstone exists: check inserts against them
	// untombstoned: the batch's deletes leave no tombstone.
	untombstoned bool
	older        bool           // an export older than one imported before: replace nothing (exportEvidence)
	olderGuild   bool           // a newer export named the batch's guild: keep its name
	olderNames   map[int64]bool // channel → a newer export named it: keep its name and topic
	imported     bool           // the batch is an import's: it does not let a left guild back in (withoutLeftGuilds)
	explain      bool           // the linker's choices come with their probability (Placements)
	stmts        map[string]*sql.Stmt

	spans   map[int64]*span   // by segment ID
	current map[int64]*span   // channel → its most recently started segment
	latest  map[int64]*placed // channel → its latest placed message, nil if none
	placed  map[int64]placed
	recent  map[int64][]segment.Line // channel → its latest spoken lines (linker)
	names   map[member]string        // a member's name, for the linker: every author in recent is here
	guilds  map[int64]int64          // channel → its guild (0: none known), read once a batch (guildOf)
	resumed bool                     // recent and names were carried from an earlier batch

	changed []int64          // messages whose text changed, for the log (logTextChanges)
	toIndex map[int64]string // message → text, for the keyword index (indexQueued)
	// unindexed counts the messages whose words left the keyword index
	// (logUnindexed).
	unindexed int64
	joined    []int64            // messages placed in a segment, for the log (logMemberships)
	touched   map[int64]bool     // channels whose messages changed, for their versions (logChanges)
	fresh     []*searchd.Message // inserted by this batch, in channel and time order, to place
	replay    *replay            // the channel being re-segmented, if any
}

const (
	qInsertMsg = `INSERT INTO messages (id, channel_id, author_id, created_at, edited_at, content, type, reply_to_id, attachments)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
	qUpdateMsg = `UPDATE messages SET edited_at = ?, content = ?, type = ?, reply_to_id = ?, attachments = ?
		WHERE id = ? AND (edited_at IS NOT ? OR content IS NOT ? OR type IS NOT ? OR reply_to_id IS NOT ? OR attachments IS NOT ?)
		AND COALESCE(edited_at, 0) <= COALESCE(?, 0)` // an older copy (a late backfill page) never undoes an edit
	// qUpdateOlder is qUpdateMsg for an older export: only a later edit
	// replaces the stored text.
	qUpdateOlder = `UPDATE messages SET edited_at = ?, content = ?, type = ?, reply_to_id = ?, attachments = ?
		WHERE id = ? AND (edited_at IS NOT ? OR content IS NOT ? OR type IS NOT ? OR reply_to_id IS NOT ? OR attachments IS NOT ?)
		AND COALESCE(edited_at, 0) < COALESCE(?, 0)`
	qIndex      = `INSERT INTO messages_fts (rowid, text, bigrams) VALUES (?, ?, ?)`
	qUnindex    = `INSERT INTO messages_fts (messages_fts, rowid, text, bigrams) VALUES ('delete', ?, ?, ?)`
	qTombstoned = `SELECT 1 FROM tombstones WHERE message_id = ?`
	qStored     = `SELECT channel_id, content, type FROM messages WHERE id = ?`
	qMention    = `INSERT INTO message_mentions (message_id, user_id, channel_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`
)

func newApplier(ctx context.Context, db *DB, tx *sql.Tx, rules segment.Rules, now int64) (*applier, error) {
	a := &applier{ctx: ctx, db: db, tx: tx, rules: rules, now: now, stmts: map[string]*sql.Stmt{},
		spans: map[int64]*span{}, current: map[int64]*span{}, latest: map[int64]*placed{}, placed: map[int64]placed{}, toIndex: map[int64]string{}, touched: map[int64]bool{}, recent: map[int64][]segment.Line{}, names: map[member]string{}, guilds: map[int64]int64{}, olderNames: map[int64]bool{}}
	row, err := a.queryRow(`SELECT EXISTS (SELECT 1 FROM tombstones)`)
	if err != nil {
		return nil, err
	}
	var n int
	if err := row.Scan(&n); err != nil {
		return nil, err
	}
	a.tombstones = n == 1
	return a, nil
}

func (a *applier) close() {
	for _, s := range a.stmts {
		s.Close()
	}
}

// stmt returns a statement of the transaction: prepared once for the
// database (DB.prepared; in pure-Go SQLite preparing costs about as much
// as running), else in the transaction on first use.
func (a *applier) stmt(q string) (*sql.Stmt, error) {
	if s, ok := a.stmts[q]; ok {
		return s, nil
	}
	var s *sql.Stmt
	if a.db != nil {
		prepared, err := a.db.prepared(a.ctx, q)
		if err != nil {
			return nil, err
		}
		s = a.tx.StmtContext(a.ctx, prepared)
	} else {
		var err error
		if s, err = a.tx.PrepareContext(a.ctx, q); err != nil {
			return nil, err
		}
	}
	a.stmts[q] = s
	return s, nil
}

func (a *applier) exec(q string, args ...any) (sql.Result, error) {
	s, err := a.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(a.ctx, args...)
}

func (a *applier) queryRow(q string, args ...any) (*sql.Row, error) {
	s, err := a.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.QueryRowContext(a.ctx, args...), nil
}

func (a *applier) apply(b *searchd.Batch) (searchd.BatchResult, error) {
	var res searchd.BatchResult
	a.untombstoned = b.Untombstoned
	b, skipped, err := a.withoutDeletedChannels(b)
	if err != nil {
		return res, err
	}
	res.Skipped += skipped
	if b, skipped, err = a.withoutLeftGuilds(b); err != nil {
		return res, err
	}
	res.Skipped += skipped
	if err := a.upsertPlaces(b); err != nil {
		return res, err
	}
	// Members who opted out: nothing of theirs is stored, names included.
	out, err := optedOut(a.ctx, a.tx)
	if err != nil {
		return res, err
	}
	msgs := b.Messages
	if len(out) > 0 {
		msgs = nil
		for _, m := range b.Messages {
			if out[m.Author.ID] {
				res.Skipped++
			} else {
				msgs = append(msgs, m)
			}
		}
	}
	if msgs, err = a.withoutTombstoned(msgs, &res); err != nil {
		return res, err
	}
	if err := a.upsertAuthors(msgs); err != nil {
		return res, err
	}
	if err := a.renamed(msgs); err != nil {
		return res, err
	}
	// Store every message first, then place the new ones channel by
	// channel in time order (placeFresh), whatever order they came in.
	order := make([]*searchd.Message, len(msgs))
	for i := range msgs {
		order[i] = &msgs[i]
	}
	slices.SortStableFunc(order, func(x, y *searchd.Message) int {
		return cmp.Or(cmp.Compare(x.ChannelID, y.ChannelID), cmp.Compare(x.CreatedAt, y.CreatedAt), cmp.Compare(x.ID, y.ID))
	})
	for _, m := range order {
		if err := a.upsertMessage(m, &res); err != nil {
			return res, fmt.Errorf("message %d: %w", m.ID, err)
		}
	}
	start := time.Now()
	if err := a.placeFresh(); err != nil {
		return res, err
	}
	if placeTimer != nil {
		placeTimer(time.Since(start))
	}
	for _, id := range b.Deletes {
		if err := a.deleteMessage(id, &res); err != nil {
			return res, fmt.Errorf("delete %d: %w", id, err)
		}
	}
	if err := a.dropOutdated(b.Outdated, &res); err != nil {
		return res, err
	}
	return res, a.flush()
}

// dropOutdated deletes each message stored in an older version than the
// edit named (searchd.Batch.Outdated), leaving no tombstone: the edit,
// refused and kept for a replay, may be stored later.
func (a *applier) dropOutdated(out []searchd.Outdated, res *searchd.BatchResult) error {
	if len(out) == 0 {
		return nil
	}
	defer func(t bool) { a.untombstoned = t }(a.untombstoned)
	a.untombstoned = true
	for _, o := range out {
		row, err := a.queryRow(`SELECT COALESCE(edited_at, 0) FROM messages WHERE id = ?`, o.ID)
		if err != nil {
			return err
		}
		var at int64
		switch err := row.Scan(&at); {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return err
		case at >= o.EditedAt:
			continue // as new as the edit, or newer
		}
		if err := a.deleteMessage(o.ID, res); err != nil {
			return fmt.Errorf("drop outdated %d: %w", o.ID, err)
		}
		res.DroppedIDs = append(res.DroppedIDs, o.ID)
	}
	return nil
}

// placeTimer, when set (BenchmarkPlaceLive), is told how long placing
// each batch's new messages took.
var placeTimer func(time.Duration)
