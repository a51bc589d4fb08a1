package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/lexical"
	"dsearch/searchd/segment"
	"dsearch/shared/api"
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
			a.older = false
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
			if err := a.saveCheckpoint(p.Checkpoint); err != nil {
				return nil, err
			}
		}
		return a.leave(), nil
	})
	for i := range res {
		res[i].Truncated = truncated[i]
	}
	return res, err
}

// saveCheckpoint records an export's progress, if cp is one.
func (a *applier) saveCheckpoint(cp *Checkpoint) error {
	if cp == nil {
		return nil
	}
	_, err := a.exec(`INSERT INTO imports (path, size, mtime, messages_done, complete, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime,
			messages_done = excluded.messages_done, complete = excluded.complete, updated_at = excluded.updated_at`,
		cp.Path, cp.Size, cp.MTime, cp.MessagesDone, cp.Complete, a.now)
	return err
}

// exportEvidence compares an import's export time with the newest one
// imported for its channel: older, the batch only fills gaps (a.older);
// newer, it becomes the newest.
func (a *applier) exportEvidence(cp *Checkpoint) error {
	if cp == nil || cp.Channel == 0 || cp.ExportedAt == 0 {
		return nil
	}
	key := fmt.Sprintf("exported_at:%d", cp.Channel)
	var newest int64
	err := a.tx.QueryRowContext(a.ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?`, key).Scan(&newest)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if cp.ExportedAt < newest {
		a.older = true
		return nil
	}
	return setMeta(a.ctx, a.tx, key, fmt.Sprint(cp.ExportedAt))
}

// ImportState returns the recorded progress of an export file, or nil.
func (db *DB) ImportState(ctx context.Context, path string) (*Checkpoint, error) {
	cp := Checkpoint{Path: path}
	err := db.db.QueryRowContext(ctx, `SELECT size, mtime, messages_done, complete FROM imports WHERE path = ?`, path).
		Scan(&cp.Size, &cp.MTime, &cp.MessagesDone, &cp.Complete)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return &cp, err
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
	older        bool // an export older than one imported before: replace nothing (exportEvidence)
	explain      bool // the linker's choices come with their probability (Placements)
	stmts        map[string]*sql.Stmt

	spans   map[int64]*span   // by segment ID
	current map[int64]*span   // channel → its most recently started segment
	latest  map[int64]*placed // channel → its latest placed message, nil if none
	placed  map[int64]placed
	recent  map[int64][]segment.Line // channel → its latest spoken lines (linker)
	names   map[member]string        // a member's name, for the linker: every author in recent is here
	guilds  map[int64]int64          // channel → its guild (0: none known), read once a batch (guildOf)
	resumed bool                     // recent and names were carried from an earlier batch

	changed []int64            // messages whose text changed, for the log (logTextChanges)
	toIndex map[int64]string   // message → text, for the keyword index (indexQueued)
	joined  []int64            // messages placed in a segment, for the log (logMemberships)
	touched map[int64]bool     // channels whose messages changed, for their versions (logChanges)
	fresh   []*searchd.Message // inserted by this batch, in channel and time order, to place
	replay  *replay            // the channel being re-segmented, if any
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
	qUnindex    = `DELETE FROM messages_fts WHERE rowid = ?`
	qTombstoned = `SELECT 1 FROM tombstones WHERE message_id = ?`
	qChannelOf  = `SELECT channel_id FROM messages WHERE id = ?`
	qMention    = `INSERT INTO message_mentions (message_id, user_id, channel_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`
)

func newApplier(ctx context.Context, db *DB, tx *sql.Tx, rules segment.Rules, now int64) (*applier, error) {
	a := &applier{ctx: ctx, db: db, tx: tx, rules: rules, now: now, stmts: map[string]*sql.Stmt{},
		spans: map[int64]*span{}, current: map[int64]*span{}, latest: map[int64]*placed{}, placed: map[int64]placed{}, toIndex: map[int64]string{}, touched: map[int64]bool{}, recent: map[int64][]segment.Line{}, names: map[member]string{}, guilds: map[int64]int64{}}
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
	return res, a.flush()
}

// logChanges adds the queued keywords and writes what the transaction's
// batches changed to the logs the daemon follows, and marks the index
// changed. Once a transaction, not a part: a statement with a statement
// journal (the logs' inserts) also makes FTS5 write what it holds in
// memory out as a new segment of its index, and every segment costs
// merging later.
func (a *applier) logChanges(changed bool) error {
	if err := a.indexQueued(); err != nil {
		return err
	}
	if err := a.logTextChanges(); err != nil {
		return err
	}
	if err := a.logMemberships(); err != nil {
		return err
	}
	if !changed {
		return nil
	}
	if err := bumpIndexVersion(a.ctx, a.tx); err != nil {
		return err
	}
	_, err := a.exec(`INSERT INTO channel_versions (channel_id, version)
		SELECT value, (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'index_version') FROM json_each(?) WHERE true
		ON CONFLICT (channel_id) DO UPDATE SET version = excluded.version`, jsonIDs(slices.Sorted(maps.Keys(a.touched))))
	clear(a.touched)
	return err
}

// placeTimer, when set (BenchmarkPlaceLive), is told how long placing
// each batch's new messages took.
var placeTimer func(time.Duration)

// textChanged notes a message whose text the keyword index must read
// again. Imports log theirs too: a daemon running beside an import then
// applies each batch's few thousand changes instead of reading every
// message again after each batch (index.Keywords).
func (a *applier) textChanged(id int64) error {
	a.changed = append(a.changed, id)
	return nil
}

// logTextChanges writes the batch's text changes to the log, in the order
// they were made, with one statement: an import's batch makes thousands.
func (a *applier) logTextChanges() error {
	if len(a.changed) == 0 {
		return nil
	}
	_, err := a.exec(`INSERT INTO text_changes (message_id) SELECT value FROM json_each(?) ORDER BY key`, jsonIDs(a.changed))
	a.changed = a.changed[:0]
	return err
}

// logMemberships writes the memberships the batch made to the membership
// log with one statement (migration 0013: no trigger per row). Moves and
// removals are logged by their triggers; the log's reader reads each
// message's segment as stored, so their order does not matter.
func (a *applier) logMemberships() error {
	if len(a.joined) == 0 {
		return nil
	}
	_, err := a.exec(`INSERT INTO membership_changes (message_id, segment_id) SELECT value, 0 FROM json_each(?) ORDER BY key`, jsonIDs(a.joined))
	a.joined = a.joined[:0]
	return err
}

// indexText queues a message for the keyword index, unless it is one of
// Discord's notices: a join or a call is history, never a search hit.
// FTS5 writes what it holds in memory out to a new segment of its index
// whenever a row comes with a lower rowid than the one before, and every
// segment costs merging later; a batch's messages come channel by channel,
// so they are added at the end of the transaction, in rowid order
// (indexQueued).
func (a *applier) indexText(m *searchd.Message) error {
	if segment.IsSystem(m.Type) {
		return nil
	}
	a.toIndex[m.ID] = m.Content
	return a.textChanged(m.ID)
}

// unindex takes a message out of the keyword index, queued or written.
func (a *applier) unindex(id int64) error {
	delete(a.toIndex, id)
	_, err := a.exec(qUnindex, id)
	return err
}

// indexQueued adds the queued messages to the keyword index, in rowid
// order.
func (a *applier) indexQueued() error {
	for _, id := range slices.Sorted(maps.Keys(a.toIndex)) {
		text := a.toIndex[id]
		if _, err := a.exec(qIndex, id, text, lexical.Bigrams(text)); err != nil {
			return err
		}
	}
	clear(a.toIndex)
	return nil
}

// bumpIndexVersion marks that the messages searched changed.
func bumpIndexVersion(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'index_version'`)
	return err
}

// raiseCursorFloor marks a change of every channel at once (a reindex, a
// restore): no cursor made before it pages after it (CursorVersion).
func raiseCursorFloor(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) SELECT 'cursor_floor', value FROM meta WHERE key = 'index_version'
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
	return err
}

// upsertPlaces writes guilds and channels, never replacing a known name
// with an empty one, and makes a placeholder row for any channel a message
// names that the batch does not describe.
func (a *applier) upsertPlaces(b *searchd.Batch) error {
	for _, g := range b.Guilds {
		q := `INSERT INTO guilds (id, name) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET name = COALESCE(NULLIF(excluded.name, ''), name)`
		if a.older { // an older export's name is the guild's old name
			q = `INSERT INTO guilds (id, name) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET name = COALESCE(NULLIF(name, ''), excluded.name)`
		}
		if _, err := a.exec(q, g.ID, g.Name); err != nil {
			return fmt.Errorf("guild %d: %w", g.ID, err)
		}
	}
	for _, c := range b.Channels {
		if c.GuildID != 0 {
			if _, err := a.exec(`INSERT INTO guilds (id) VALUES (?) ON CONFLICT DO NOTHING`, c.GuildID); err != nil {
				return err
			}
		}
		q := `INSERT INTO channels (id, guild_id, parent_id, name, kind, topic) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET
				guild_id = COALESCE(excluded.guild_id, guild_id),
				parent_id = COALESCE(excluded.parent_id, parent_id),
				name = COALESCE(NULLIF(excluded.name, ''), name),
				kind = COALESCE(NULLIF(excluded.kind, ''), kind),
				topic = COALESCE(NULLIF(excluded.topic, ''), topic)`
		if a.older {
			q = strings.NewReplacer("COALESCE(NULLIF(excluded.name, ''), name)", "COALESCE(NULLIF(name, ''), excluded.name)",
				"COALESCE(NULLIF(excluded.topic, ''), topic)", "COALESCE(NULLIF(topic, ''), excluded.topic)").Replace(q)
		}
		if _, err := a.exec(q,
			c.ID, nullID(c.GuildID), nullID(c.ParentID), c.Name, c.Kind, c.Topic); err != nil {
			return fmt.Errorf("channel %d: %w", c.ID, err)
		}
	}
	seen := map[int64]bool{}
	for _, m := range b.Messages {
		if !seen[m.ChannelID] {
			seen[m.ChannelID] = true
			if _, err := a.exec(`INSERT INTO channels (id) VALUES (?) ON CONFLICT DO NOTHING`, m.ChannelID); err != nil {
				return err
			}
		}
	}
	return nil
}

// upsertAuthors records each author and every name they were seen under in
// the batch, with the first and last time of each: the alias dictionary's
// raw material, keyed by the unchanging user ID.
func (a *applier) upsertAuthors(msgs []searchd.Message) error {
	type nameKey struct {
		user, guild int64 // guild: a nickname's server; 0 for the others
		kind, name  string
	}
	type seenSpan struct{ first, last int64 }
	latest := map[int64]*searchd.Message{}
	latestIn := map[member]*searchd.Message{} // for the nickname a member goes by in a server
	names := map[nameKey]*seenSpan{}
	note := func(k nameKey, at int64) {
		if k.name == "" {
			return
		}
		if s, ok := names[k]; ok {
			s.first, s.last = min(s.first, at), max(s.last, at)
		} else {
			names[k] = &seenSpan{at, at}
		}
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Partial {
			// It carries what changed, not necessarily the author's names
			// now: it only makes sure the author exists (if it names one).
			if m.Author.ID == 0 {
				continue
			}
			if _, err := a.exec(`INSERT INTO users (id, name, display_name, display_at, is_bot) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (id) DO NOTHING`, m.Author.ID, m.Author.Username, m.Author.GlobalName, m.CreatedAt, m.Author.Bot); err != nil {
				return fmt.Errorf("user %d: %w", m.Author.ID, err)
			}
			continue
		}
		if l, ok := latest[m.Author.ID]; !ok || m.CreatedAt >= l.CreatedAt {
			latest[m.Author.ID] = m
		}
		guild, err := a.guildOf(m.ChannelID)
		if err != nil {
			return err
		}
		if k := (member{guild, m.Author.ID}); latestIn[k] == nil || m.CreatedAt >= latestIn[k].CreatedAt {
			latestIn[k] = m
		}
		note(nameKey{m.Author.ID, 0, "username", m.Author.Username}, m.CreatedAt)
		note(nameKey{m.Author.ID, 0, "global", m.Author.GlobalName}, m.CreatedAt)
		note(nameKey{m.Author.ID, guild, "nickname", m.Author.Nickname}, m.CreatedAt)
	}
	for id, m := range latest {
		if _, err := a.exec(`INSERT INTO users (id, name, display_name, display_at, is_bot) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET
				name = CASE WHEN excluded.display_at >= display_at THEN excluded.name ELSE name END,
				display_name = CASE WHEN excluded.display_at >= display_at THEN excluded.display_name ELSE display_name END,
				display_at = MAX(display_at, excluded.display_at),
				is_bot = excluded.is_bot`,
			id, m.Author.Username, m.Author.GlobalName, m.CreatedAt, m.Author.Bot); err != nil {
			return fmt.Errorf("user %d: %w", id, err)
		}
	}
	for k, m := range latestIn {
		if _, err := a.exec(`INSERT INTO server_nicknames (guild_id, user_id, nickname, at) VALUES (?, ?, ?, ?)
			ON CONFLICT (guild_id, user_id) DO UPDATE SET
				nickname = CASE WHEN excluded.at >= at THEN excluded.nickname ELSE nickname END,
				at = MAX(at, excluded.at)`,
			k.guild, k.user, m.Author.Nickname, m.CreatedAt); err != nil {
			return fmt.Errorf("user %d: %w", k.user, err)
		}
	}
	for k, s := range names {
		if _, err := a.exec(`INSERT INTO user_names (user_id, guild_id, kind, name, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (user_id, guild_id, kind, name) DO UPDATE SET
				first_seen = MIN(first_seen, excluded.first_seen), last_seen = MAX(last_seen, excluded.last_seen)`,
			k.user, k.guild, k.kind, k.name, s.first, s.last); err != nil {
			return fmt.Errorf("user %d name: %w", k.user, err)
		}
	}
	return nil
}

func (a *applier) upsertMessage(m *searchd.Message, res *searchd.BatchResult) error {
	if a.tombstones {
		row, err := a.queryRow(qTombstoned, m.ID)
		if err != nil {
			return err
		}
		var one int
		switch err := row.Scan(&one); {
		case err == nil:
			res.Skipped++
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
	}
	if m.Partial {
		known, err := a.fillFromStored(m)
		if err != nil {
			return err
		}
		if !known && m.Author.ID == 0 {
			// A link preview for a message not stored (the bot's own, or
			// one never synced): there is no text to add it to.
			res.Unchanged++
			return nil
		}
	}
	if len(m.Embeds) > 0 {
		m.Content, _ = api.Clip(api.AddEmbeds(m.Content, m.Embeds), api.MaxContentBytes)
	}
	edited, reply := nullID(m.EditedAt), nullID(m.ReplyToID)
	r, err := a.exec(qInsertMsg, m.ID, m.ChannelID, m.Author.ID, m.CreatedAt, edited, m.Content, m.Type, reply, m.Attachments)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		// Known. A snowflake names one message everywhere, so the same ID
		// in another channel is a broken export: refuse it rather than
		// move text into a channel whose readers may not see the other.
		row, err := a.queryRow(qChannelOf, m.ID)
		if err != nil {
			return err
		}
		var stored int64
		if err := row.Scan(&stored); err != nil {
			return err
		}
		if stored != m.ChannelID {
			res.Conflicts++
			if len(res.ConflictIDs) < searchd.MaxConflictIDs {
				res.ConflictIDs = append(res.ConflictIDs, m.ID)
			}
			return nil
		}
		// An edit keeps its segment, whose text is now stale.
		update := qUpdateMsg
		if a.older {
			update = qUpdateOlder
		}
		r, err := a.exec(update, edited, m.Content, m.Type, reply, m.Attachments,
			m.ID, edited, m.Content, m.Type, reply, m.Attachments, edited)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			res.Unchanged++
			return nil
		}
		res.Updated++
		a.touched[m.ChannelID] = true
		delete(a.recent, m.ChannelID) // a carried window holds its old words
		// Its text changed: its vector is stale, its keywords too.
		if _, err := a.exec(`DELETE FROM message_vectors WHERE message_id = ?`, m.ID); err != nil {
			return err
		}
		if err := a.unindex(m.ID); err != nil {
			return err
		}
		if err := a.indexText(m); err != nil {
			return err
		}
		return a.touchSegmentOf(m.ID)
	}
	res.Inserted++
	a.touched[m.ChannelID] = true
	if err := a.indexText(m); err != nil {
		return err
	}
	for _, u := range m.Mentions {
		if _, err := a.exec(qMention, m.ID, u, m.ChannelID, m.CreatedAt); err != nil {
			return err
		}
	}
	a.fresh = append(a.fresh, m)
	return nil
}

// fillFromStored completes a partial update of a stored message with
// what it does not carry, so that the update erases nothing: an empty
// content, type or reply, no attachments, no edit time all mean "not
// sent". An unknown message (or one stored in another channel, which the
// caller refuses) is left as it came; known reports whether it was stored.
func (a *applier) fillFromStored(m *searchd.Message) (known bool, err error) {
	row, err := a.queryRow(`SELECT channel_id, COALESCE(edited_at, 0), content, type, COALESCE(reply_to_id, 0), attachments
		FROM messages WHERE id = ?`, m.ID)
	if err != nil {
		return false, err
	}
	var s searchd.Message
	switch err := row.Scan(&s.ChannelID, &s.EditedAt, &s.Content, &s.Type, &s.ReplyToID, &s.Attachments); {
	case errors.Is(err, sql.ErrNoRows):
		if m.Type == "" {
			m.Type = "Default"
		}
		return false, nil
	case err != nil:
		return false, err
	case s.ChannelID != m.ChannelID:
		return true, nil
	}
	m.Content = cmp.Or(m.Content, s.Content)
	m.EditedAt = cmp.Or(m.EditedAt, s.EditedAt)
	m.Type = cmp.Or(m.Type, s.Type)
	m.ReplyToID = cmp.Or(m.ReplyToID, s.ReplyToID)
	m.Attachments = cmp.Or(m.Attachments, s.Attachments)
	return true, nil
}

// touchSegmentOf marks an edited message's segment as changed. It writes
// the row directly: loading the span here would cache bounds that a
// re-segmentation later in the batch must compute afresh.
func (a *applier) touchSegmentOf(msg int64) error {
	if _, err := a.exec(`UPDATE segments SET revision = revision + 1 WHERE id = (SELECT segment_id FROM message_segments WHERE message_id = ?)`, msg); err != nil {
		return err
	}
	return a.dropDerived(`(SELECT segment_id FROM message_segments WHERE message_id = ?)`, msg)
}

// dropDerived deletes what was computed from the text of the segment the
// subquery names: its vector and windows and its cached catch-up summary.
// Once a message of it changed or left (an edit, a deletion, an opt-out, a
// re-segmentation), stale ones are never used, but they would keep on
// disk what was taken away (a vector encodes its text); the embedding job
// embeds the segment again.
func (a *applier) dropDerived(segment string, arg int64) error {
	for _, table := range []string{"segment_summaries", "segment_windows", "segment_vectors"} {
		if _, err := a.exec(`DELETE FROM `+table+` WHERE segment_id = `+segment, arg); err != nil {
			return err
		}
	}
	return nil
}

// deleteMessage removes a message and its membership and leaves a
// tombstone (unless untombstoned); its segment's bounds and count are
// recomputed at flush.
func (a *applier) deleteMessage(id int64, res *searchd.BatchResult) error {
	row, err := a.queryRow(`SELECT m.channel_id, COALESCE(ms.segment_id, 0) FROM messages m
		LEFT JOIN message_segments ms ON ms.message_id = m.id WHERE m.id = ?`, id)
	if err != nil {
		return err
	}
	var channel, seg int64
	if err := row.Scan(&channel, &seg); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	r, err := a.exec(`DELETE FROM messages WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if err := a.unindex(id); err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n > 0 {
		res.Deleted++
		a.touched[channel] = true
		if err := a.textChanged(id); err != nil {
			return err
		}
	}
	if !a.untombstoned {
		if _, err := a.exec(`INSERT INTO tombstones (message_id, deleted_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, a.now); err != nil {
			return err
		}
		a.tombstones = true
	}
	delete(a.placed, id)
	clear(a.latest)           // it may name the deleted message; reload on next use
	delete(a.recent, channel) // its window may hold it (none for a message not stored)
	if seg != 0 {
		s, err := a.span(seg)
		if err != nil {
			return err
		}
		s.recount = true // and what was derived from its text dropped (flush)
	}
	return nil
}

// nullID maps the zero ID (or time) to SQL NULL.
func nullID(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}
