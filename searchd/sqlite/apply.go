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
	"dsearch/searchd/lexical"
	"dsearch/searchd/segment"
)

// Checkpoint records an export file's progress in the same transaction as
// the batch that made it, so an import resumes exactly after a crash.
type Checkpoint struct {
	Path         string
	Size, MTime  int64
	MessagesDone int64
	Complete     bool
}

// Apply writes a batch in one transaction: guilds, channels, authors and
// their names, new and edited messages, deletions. New messages are placed
// in segments incrementally (see segment.Rules.Place); history is never
// re-segmented. cp, if not nil, is saved in the same transaction. Texts
// over the limits of shared/api are cut first, in b (searchd.Batch.Bound).
func (db *DB) Apply(ctx context.Context, b *searchd.Batch, rules segment.Rules, cp *Checkpoint) (searchd.BatchResult, error) {
	truncated := b.Bound() // every way in passes here: nothing stored grows without bound
	var res searchd.BatchResult
	err := db.write(ctx, func(tx *sql.Tx) error {
		a, err := newApplier(ctx, tx, rules, db.now().UnixMicro())
		if err != nil {
			return err
		}
		defer a.close()
		a.logText = cp == nil
		if res, err = a.apply(b); err != nil {
			return err
		}
		if cp != nil {
			_, err = tx.ExecContext(ctx, `INSERT INTO imports (path, size, mtime, messages_done, complete, updated_at)
				VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime,
					messages_done = excluded.messages_done, complete = excluded.complete, updated_at = excluded.updated_at`,
				cp.Path, cp.Size, cp.MTime, cp.MessagesDone, cp.Complete, a.now)
		}
		return err
	})
	res.Truncated = truncated
	return res, err
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

// span is a segment as the applier keeps it while a transaction runs.
type span struct {
	id, channel      int64
	startAt, endAt   int64
	startMsg, endMsg int64
	count            int64
	dirty, recount   bool
}

// applier holds one transaction's prepared statements and the segments it
// touches; nothing outlives the transaction, so a rollback leaves no stale
// cache behind.
type applier struct {
	ctx   context.Context
	tx    *sql.Tx
	rules segment.Rules
	now   int64

	tombstones bool // any tombstone exists: check inserts against them
	// logText records each changed message in text_changes for the
	// in-memory keyword index; an import instead bumps text_epoch once,
	// and the index reloads.
	logText bool
	stmts   map[string]*sql.Stmt

	spans   map[int64]*span   // by segment ID
	current map[int64]*span   // channel → its most recently started segment
	latest  map[int64]*placed // channel → its latest placed message, nil if none
	placed  map[int64]placed
	recent  map[int64]*recent // channel → its latest spoken messages (busy rules)
}

// placed is a message placed during this transaction, for replies to it.
type placed struct{ channel, at, segment int64 }

const (
	qInsertMsg = `INSERT INTO messages (id, channel_id, author_id, created_at, edited_at, content, type, reply_to_id, attachments)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`
	qUpdateMsg = `UPDATE messages SET edited_at = ?, content = ?, type = ?, reply_to_id = ?, attachments = ?
		WHERE id = ? AND (edited_at IS NOT ? OR content IS NOT ? OR type IS NOT ? OR reply_to_id IS NOT ? OR attachments IS NOT ?)
		AND COALESCE(edited_at, 0) <= COALESCE(?, 0)` // an older copy (a late backfill page) never undoes an edit
	qIndex      = `INSERT INTO messages_fts (rowid, text, bigrams) VALUES (?, ?, ?)`
	qUnindex    = `DELETE FROM messages_fts WHERE rowid = ?`
	qTombstoned = `SELECT 1 FROM tombstones WHERE message_id = ?`
	qMention    = `INSERT INTO message_mentions (message_id, user_id, channel_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`
	qMember     = `INSERT INTO message_segments (message_id, segment_id) VALUES (?, ?)`
	qSegmentOf  = `SELECT segment_id FROM message_segments WHERE message_id = ?`
	qLatestMsg  = `SELECT m.channel_id, m.created_at, ms.segment_id FROM messages m JOIN message_segments ms ON ms.message_id = m.id WHERE m.channel_id = ? ORDER BY m.created_at DESC, m.id DESC LIMIT 1`
	qMsgAt      = `SELECT m.channel_id, m.created_at, ms.segment_id FROM messages m JOIN message_segments ms ON ms.message_id = m.id WHERE m.channel_id = ? AND m.created_at <= ? ORDER BY m.created_at DESC, m.id DESC LIMIT 1`
	qParent     = `SELECT m.channel_id, m.created_at, ms.segment_id FROM messages m JOIN message_segments ms ON ms.message_id = m.id WHERE m.id = ?`
	qSpan       = `SELECT id, channel_id, start_at, end_at, start_message_id, end_message_id, message_count FROM segments WHERE id = ?`
	qLatestSpan = `SELECT id, channel_id, start_at, end_at, start_message_id, end_message_id, message_count FROM segments WHERE channel_id = ? ORDER BY start_at DESC, id DESC LIMIT 1`
	qSpanAt     = `SELECT id, channel_id, start_at, end_at, start_message_id, end_message_id, message_count FROM segments WHERE channel_id = ? AND start_at <= ? ORDER BY start_at DESC, id DESC LIMIT 1`
	qNewSpan    = `INSERT INTO segments (channel_id, start_message_id, end_message_id, start_at, end_at, message_count, revision) VALUES (?, ?, ?, ?, ?, 0, 0) RETURNING id`
	qUpdateSpan = `UPDATE segments SET start_message_id = ?, end_message_id = ?, start_at = ?, end_at = ?, message_count = ?, revision = revision + 1 WHERE id = ?`
)

func newApplier(ctx context.Context, tx *sql.Tx, rules segment.Rules, now int64) (*applier, error) {
	a := &applier{ctx: ctx, tx: tx, rules: rules, now: now, stmts: map[string]*sql.Stmt{},
		spans: map[int64]*span{}, current: map[int64]*span{}, latest: map[int64]*placed{}, placed: map[int64]placed{}, recent: map[int64]*recent{}}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM tombstones)`).Scan(&n); err != nil {
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

// stmt returns a prepared statement, preparing it on first use.
func (a *applier) stmt(q string) (*sql.Stmt, error) {
	if s, ok := a.stmts[q]; ok {
		return s, nil
	}
	s, err := a.tx.PrepareContext(a.ctx, q)
	if err != nil {
		return nil, err
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
	if err := a.upsertPlaces(b); err != nil {
		return res, err
	}
	if err := a.upsertAuthors(b.Messages); err != nil {
		return res, err
	}
	// Place messages in time order within each channel, whatever order
	// they came in.
	order := make([]*searchd.Message, len(b.Messages))
	for i := range b.Messages {
		order[i] = &b.Messages[i]
	}
	slices.SortStableFunc(order, func(x, y *searchd.Message) int {
		return cmp.Or(cmp.Compare(x.ChannelID, y.ChannelID), cmp.Compare(x.CreatedAt, y.CreatedAt), cmp.Compare(x.ID, y.ID))
	})
	for _, m := range order {
		if err := a.upsertMessage(m, &res); err != nil {
			return res, fmt.Errorf("message %d: %w", m.ID, err)
		}
	}
	for _, id := range b.Deletes {
		if err := a.deleteMessage(id, &res); err != nil {
			return res, fmt.Errorf("delete %d: %w", id, err)
		}
	}
	if err := a.flush(); err != nil {
		return res, err
	}
	if res.Inserted+res.Updated+res.Deleted == 0 {
		return res, nil
	}
	if !a.logText {
		if _, err := a.tx.ExecContext(a.ctx, `UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'text_epoch'`); err != nil {
			return res, err
		}
	}
	return res, bumpIndexVersion(a.ctx, a.tx)
}

// textChanged notes a message whose text the keyword index must read again.
func (a *applier) textChanged(id int64) error {
	if !a.logText {
		return nil
	}
	_, err := a.exec(`INSERT INTO text_changes (message_id) VALUES (?)`, id)
	return err
}

// indexText adds a message to the keyword index.
func (a *applier) indexText(id int64, content string) error {
	if _, err := a.exec(qIndex, id, content, lexical.Bigrams(content)); err != nil {
		return err
	}
	return a.textChanged(id)
}

// bumpIndexVersion marks that searchable data changed.
func bumpIndexVersion(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'index_version'`)
	return err
}

// upsertPlaces writes guilds and channels, never replacing a known name
// with an empty one, and makes a placeholder row for any channel a message
// names that the batch does not describe.
func (a *applier) upsertPlaces(b *searchd.Batch) error {
	for _, g := range b.Guilds {
		if _, err := a.exec(`INSERT INTO guilds (id, name) VALUES (?, ?)
			ON CONFLICT (id) DO UPDATE SET name = COALESCE(NULLIF(excluded.name, ''), name)`, g.ID, g.Name); err != nil {
			return fmt.Errorf("guild %d: %w", g.ID, err)
		}
	}
	for _, c := range b.Channels {
		if c.GuildID != 0 {
			if _, err := a.exec(`INSERT INTO guilds (id) VALUES (?) ON CONFLICT DO NOTHING`, c.GuildID); err != nil {
				return err
			}
		}
		if _, err := a.exec(`INSERT INTO channels (id, guild_id, parent_id, name, kind, topic) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET
				guild_id = COALESCE(excluded.guild_id, guild_id),
				parent_id = COALESCE(excluded.parent_id, parent_id),
				name = COALESCE(NULLIF(excluded.name, ''), name),
				kind = COALESCE(NULLIF(excluded.kind, ''), kind),
				topic = COALESCE(NULLIF(excluded.topic, ''), topic)`,
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
		user       int64
		kind, name string
	}
	type seenSpan struct{ first, last int64 }
	latest := map[int64]*searchd.Message{}
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
		if l, ok := latest[m.Author.ID]; !ok || m.CreatedAt >= l.CreatedAt {
			latest[m.Author.ID] = m
		}
		note(nameKey{m.Author.ID, "username", m.Author.Username}, m.CreatedAt)
		note(nameKey{m.Author.ID, "global", m.Author.GlobalName}, m.CreatedAt)
		note(nameKey{m.Author.ID, "nickname", m.Author.Nickname}, m.CreatedAt)
	}
	for id, m := range latest {
		if _, err := a.exec(`INSERT INTO users (id, name, display_name, display_at, is_bot) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET
				name = CASE WHEN excluded.display_at >= display_at THEN excluded.name ELSE name END,
				display_name = CASE WHEN excluded.display_at >= display_at THEN excluded.display_name ELSE display_name END,
				display_at = MAX(display_at, excluded.display_at),
				is_bot = excluded.is_bot`,
			id, m.Author.Username, m.Author.DisplayName(), m.CreatedAt, m.Author.Bot); err != nil {
			return fmt.Errorf("user %d: %w", id, err)
		}
	}
	for k, s := range names {
		if _, err := a.exec(`INSERT INTO user_names (user_id, kind, name, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (user_id, kind, name) DO UPDATE SET
				first_seen = MIN(first_seen, excluded.first_seen), last_seen = MAX(last_seen, excluded.last_seen)`,
			k.user, k.kind, k.name, s.first, s.last); err != nil {
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
	edited, reply := nullID(m.EditedAt), nullID(m.ReplyToID)
	r, err := a.exec(qInsertMsg, m.ID, m.ChannelID, m.Author.ID, m.CreatedAt, edited, m.Content, m.Type, reply, m.Attachments)
	if err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n == 0 {
		// Known: an edit keeps its segment, whose text is now stale.
		r, err := a.exec(qUpdateMsg, edited, m.Content, m.Type, reply, m.Attachments,
			m.ID, edited, m.Content, m.Type, reply, m.Attachments, edited)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			res.Unchanged++
			return nil
		}
		res.Updated++
		// Its text changed: its vector is stale, its keywords too.
		if _, err := a.exec(`DELETE FROM message_vectors WHERE message_id = ?`, m.ID); err != nil {
			return err
		}
		if _, err := a.exec(qUnindex, m.ID); err != nil {
			return err
		}
		if err := a.indexText(m.ID, m.Content); err != nil {
			return err
		}
		return a.touchSegmentOf(m.ID)
	}
	res.Inserted++
	if err := a.indexText(m.ID, m.Content); err != nil {
		return err
	}
	for _, u := range m.Mentions {
		if _, err := a.exec(qMention, m.ID, u, m.ChannelID, m.CreatedAt); err != nil {
			return err
		}
	}
	return a.place(m)
}

// place puts a new message into a segment by the rules.
func (a *applier) place(m *searchd.Message) error {
	parent, err := a.parent(m)
	if err != nil {
		return err
	}
	cur, err := a.currentAt(m.ChannelID, m.CreatedAt)
	if err != nil {
		return err
	}
	prev, err := a.previousAt(m.ChannelID, m.CreatedAt)
	if err != nil {
		return err
	}
	id := a.rules.Place(m.CreatedAt, parent, cur.public(), prev.public())
	if a.rules.Busy {
		busy, pace, err := a.busy(m)
		if err != nil {
			return err
		}
		if busy {
			if segment.IsSystem(m.Type) {
				id = 0 // a join or a pin is nobody's conversation
			} else {
				b, err := a.busyContext(m, pace)
				if err != nil {
					return err
				}
				id = a.rules.PlaceBusy(m.CreatedAt, parent, b)
			}
		}
	}
	var s *span
	if id != 0 {
		if s, err = a.span(id); err != nil {
			return err
		}
	} else if s, err = a.newSpan(m); err != nil {
		return err
	}
	if _, err := a.exec(qMember, m.ID, s.id); err != nil {
		return err
	}
	s.count++
	if s.count == 1 || m.CreatedAt < s.startAt || (m.CreatedAt == s.startAt && m.ID < s.startMsg) {
		s.startAt, s.startMsg = m.CreatedAt, m.ID
	}
	if s.count == 1 || m.CreatedAt > s.endAt || (m.CreatedAt == s.endAt && m.ID > s.endMsg) {
		s.endAt, s.endMsg = m.CreatedAt, m.ID
	}
	s.dirty = true
	p := placed{m.ChannelID, m.CreatedAt, s.id}
	a.placed[m.ID] = p
	if a.rules.Busy {
		a.noteRecent(m)
	}
	if l := a.latest[m.ChannelID]; l == nil || m.CreatedAt >= l.at {
		a.latest[m.ChannelID] = &p
	}
	return nil
}

const spoken = `m.type IN ('Default', 'Reply')`

// recent is a channel's latest spoken messages, oldest first, up to the
// busy window: enough to tell a busy channel and its pace.
type recent struct {
	authors, times []int64
}

// busy reports whether m's channel is busy by the rules (enough distinct
// authors among its messages shortly before m) and the channel's pace
// there. The window is read once per channel and transaction and then
// follows the messages placed in time order.
func (a *applier) busy(m *searchd.Message) (bool, segment.Pace, error) {
	r, ok := a.recent[m.ChannelID]
	if !ok || (len(r.times) > 0 && m.CreatedAt < r.times[len(r.times)-1]) {
		var err error
		if r, err = a.loadRecent(m); err != nil {
			return false, segment.Pace{}, err
		}
		if !ok {
			a.recent[m.ChannelID] = r
		}
	}
	busy := segment.WasBusy(r.authors, r.times, m.CreatedAt, a.rules)
	gaps := make([]int64, 0, len(r.times))
	for i := 1; i < len(r.times); i++ {
		gaps = append(gaps, r.times[i]-r.times[i-1])
	}
	slices.Sort(gaps)
	var pace segment.Pace
	if len(gaps) > 0 {
		pace.MedianGap = time.Duration(gaps[len(gaps)/2]) * time.Microsecond
	}
	return busy, pace, nil
}

// noteRecent adds a placed message to its channel's window.
func (a *applier) noteRecent(m *searchd.Message) {
	r, ok := a.recent[m.ChannelID]
	if !ok || segment.IsSystem(m.Type) || (len(r.times) > 0 && m.CreatedAt < r.times[len(r.times)-1]) {
		return
	}
	r.authors = append(r.authors, m.Author.ID)
	r.times = append(r.times, m.CreatedAt)
	if n := len(r.times) - a.rules.BusyWindow; n > 0 {
		r.authors, r.times = r.authors[n:], r.times[n:]
	}
}

func (a *applier) loadRecent(m *searchd.Message) (*recent, error) {
	s, err := a.stmt(`SELECT m.author_id, m.created_at FROM messages m
		WHERE m.channel_id = ? AND m.created_at <= ? AND m.id != ? AND ` + spoken + `
		ORDER BY m.created_at DESC, m.id DESC LIMIT ?`)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(a.ctx, m.ChannelID, m.CreatedAt, m.ID, a.rules.BusyWindow)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	r := &recent{}
	for rows.Next() {
		var author, at int64
		if err := rows.Scan(&author, &at); err != nil {
			return nil, err
		}
		r.authors = append(r.authors, author)
		r.times = append(r.times, at)
	}
	slices.Reverse(r.authors)
	slices.Reverse(r.times)
	return r, rows.Err()
}

// busyContext gathers what PlaceBusy weighs: the latest messages of the
// people m mentions, the latest message that mentioned m's author, and
// the author's own latest message, all in m's channel before m.
func (a *applier) busyContext(m *searchd.Message, pace segment.Pace) (segment.Busy, error) {
	b := segment.Busy{Pace: pace}
	seen := func(q string, args ...any) (*segment.Seen, error) {
		row, err := a.queryRow(q, args...)
		if err != nil {
			return nil, err
		}
		var s segment.Seen
		switch err := row.Scan(&s.At, &s.SegmentID); {
		case errors.Is(err, sql.ErrNoRows):
			return nil, nil
		case err != nil:
			return nil, err
		}
		return &s, nil
	}
	const byAuthor = `SELECT m.created_at, ms.segment_id FROM messages m JOIN message_segments ms ON ms.message_id = m.id
		WHERE m.channel_id = ? AND m.author_id = ? AND m.created_at <= ? AND m.id != ? AND ` + spoken + `
		ORDER BY m.created_at DESC, m.id DESC LIMIT 1`
	for _, u := range m.Mentions {
		if u == m.Author.ID {
			continue
		}
		s, err := seen(byAuthor, m.ChannelID, u, m.CreatedAt, m.ID)
		if err != nil {
			return b, err
		}
		if s != nil {
			b.Addressees = append(b.Addressees, *s)
		}
	}
	var err error
	b.AddressedBy, err = seen(`SELECT mm.created_at, ms.segment_id FROM message_mentions mm
		JOIN message_segments ms ON ms.message_id = mm.message_id JOIN messages m ON m.id = mm.message_id
		WHERE mm.user_id = ? AND mm.channel_id = ? AND mm.created_at <= ? AND mm.message_id != ? AND m.author_id != ?
		ORDER BY mm.created_at DESC, mm.message_id DESC LIMIT 1`, m.Author.ID, m.ChannelID, m.CreatedAt, m.ID, m.Author.ID)
	if err != nil {
		return b, err
	}
	b.Own, err = seen(byAuthor, m.ChannelID, m.Author.ID, m.CreatedAt, m.ID)
	return b, err
}

func (s *span) public() *segment.Span {
	if s == nil {
		return nil
	}
	return &segment.Span{ID: s.id, StartAt: s.startAt, EndAt: s.endAt}
}

// previousAt returns the segment of the channel's latest message at or
// before `at` (other than those being placed now).
func (a *applier) previousAt(channel, at int64) (*span, error) {
	l, ok := a.latest[channel]
	if !ok {
		var err error
		if l, err = a.loadPlaced(qLatestMsg, channel); err != nil {
			return nil, err
		}
		a.latest[channel] = l
	}
	if l != nil && l.at > at {
		var err error
		if l, err = a.loadPlaced(qMsgAt, channel, at); err != nil {
			return nil, err
		}
	}
	if l == nil {
		return nil, nil
	}
	return a.span(l.segment)
}

func (a *applier) loadPlaced(q string, args ...any) (*placed, error) {
	row, err := a.queryRow(q, args...)
	if err != nil {
		return nil, err
	}
	var p placed
	switch err := row.Scan(&p.channel, &p.at, &p.segment); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &p, nil
}

// parent finds a reply's parent in the same channel, if it is stored.
func (a *applier) parent(m *searchd.Message) (*segment.Parent, error) {
	if m.ReplyToID == 0 {
		return nil, nil
	}
	p, ok := a.placed[m.ReplyToID]
	if !ok {
		found, err := a.loadPlaced(qParent, m.ReplyToID)
		if err != nil || found == nil {
			return nil, err
		}
		p = *found
	}
	if p.channel != m.ChannelID {
		return nil, nil // a reply across channels does not merge conversations
	}
	return &segment.Parent{CreatedAt: p.at, SegmentID: p.segment}, nil
}

// currentAt returns the channel's most recently started segment at or
// before `at`: its current conversation, for messages arriving in order.
func (a *applier) currentAt(channel, at int64) (*span, error) {
	cur, ok := a.current[channel]
	if !ok {
		var err error
		if cur, err = a.loadSpan(qLatestSpan, channel); err != nil {
			return nil, err
		}
		a.current[channel] = cur
	}
	if cur == nil || cur.startAt <= at {
		return cur, nil
	}
	// An older message than the channel's current conversation (an export
	// imported out of order): ask the database, brought up to date first.
	if err := a.flush(); err != nil {
		return nil, err
	}
	return a.loadSpan(qSpanAt, channel, at)
}

// span returns a segment by ID, from this transaction's cache or the
// database.
func (a *applier) span(id int64) (*span, error) {
	if s, ok := a.spans[id]; ok {
		return s, nil
	}
	s, err := a.loadSpan(qSpan, id)
	if err == nil && s == nil {
		err = fmt.Errorf("segment %d vanished", id)
	}
	return s, err
}

func (a *applier) loadSpan(q string, args ...any) (*span, error) {
	row, err := a.queryRow(q, args...)
	if err != nil {
		return nil, err
	}
	var s span
	switch err := row.Scan(&s.id, &s.channel, &s.startAt, &s.endAt, &s.startMsg, &s.endMsg, &s.count); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if cached, ok := a.spans[s.id]; ok {
		return cached, nil // ours is newer than the row, or equal
	}
	a.spans[s.id] = &s
	return &s, nil
}

func (a *applier) newSpan(m *searchd.Message) (*span, error) {
	row, err := a.queryRow(qNewSpan, m.ChannelID, m.ID, m.ID, m.CreatedAt, m.CreatedAt)
	if err != nil {
		return nil, err
	}
	s := &span{channel: m.ChannelID, startAt: m.CreatedAt, endAt: m.CreatedAt, startMsg: m.ID, endMsg: m.ID}
	if err := row.Scan(&s.id); err != nil {
		return nil, err
	}
	a.spans[s.id] = s
	if cur := a.current[m.ChannelID]; cur == nil || s.startAt >= cur.startAt {
		a.current[m.ChannelID] = s
	}
	return s, nil
}

// touchSegmentOf marks an edited message's segment as changed.
func (a *applier) touchSegmentOf(msg int64) error {
	row, err := a.queryRow(qSegmentOf, msg)
	if err != nil {
		return err
	}
	var id int64
	switch err := row.Scan(&id); {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	s, err := a.span(id)
	if err != nil {
		return err
	}
	s.dirty = true
	return nil
}

// deleteMessage removes a message and its membership and leaves a
// tombstone; its segment's bounds and count are recomputed at flush.
func (a *applier) deleteMessage(id int64, res *searchd.BatchResult) error {
	row, err := a.queryRow(qSegmentOf, id)
	if err != nil {
		return err
	}
	var seg int64
	if err := row.Scan(&seg); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	r, err := a.exec(`DELETE FROM messages WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if _, err := a.exec(qUnindex, id); err != nil {
		return err
	}
	if n, _ := r.RowsAffected(); n > 0 {
		res.Deleted++
		if err := a.textChanged(id); err != nil {
			return err
		}
	}
	if _, err := a.exec(`INSERT INTO tombstones (message_id, deleted_at) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, a.now); err != nil {
		return err
	}
	a.tombstones = true
	delete(a.placed, id)
	clear(a.latest) // it may name the deleted message; reload on next use
	clear(a.recent)
	if seg != 0 {
		s, err := a.span(seg)
		if err != nil {
			return err
		}
		s.recount = true
	}
	return nil
}

// flush writes changed segments back. A segment that lost members is
// recomputed from what remains, and removed when nothing does.
func (a *applier) flush() error {
	for id, s := range a.spans {
		if s.recount {
			if err := a.recount(s); err != nil {
				return err
			}
			s.recount, s.dirty = false, true
			if s.count == 0 {
				if _, err := a.exec(`DELETE FROM segments WHERE id = ?`, id); err != nil {
					return err
				}
				delete(a.spans, id)
				if a.current[s.channel] == s {
					delete(a.current, s.channel) // reload on next use
				}
				continue
			}
		}
		if s.dirty {
			if _, err := a.exec(qUpdateSpan, s.startMsg, s.endMsg, s.startAt, s.endAt, s.count, id); err != nil {
				return err
			}
			s.dirty = false
		}
	}
	return nil
}

func (a *applier) recount(s *span) error {
	row, err := a.queryRow(`SELECT COUNT(*) FROM message_segments WHERE segment_id = ?`, s.id)
	if err != nil {
		return err
	}
	if err := row.Scan(&s.count); err != nil || s.count == 0 {
		return err
	}
	const ends = `SELECT m.id, m.created_at FROM message_segments ms JOIN messages m ON m.id = ms.message_id
		WHERE ms.segment_id = ? ORDER BY m.created_at %s, m.id %s LIMIT 1`
	if row, err = a.queryRow(fmt.Sprintf(ends, "ASC", "ASC"), s.id); err != nil {
		return err
	}
	if err := row.Scan(&s.startMsg, &s.startAt); err != nil {
		return err
	}
	if row, err = a.queryRow(fmt.Sprintf(ends, "DESC", "DESC"), s.id); err != nil {
		return err
	}
	return row.Scan(&s.endMsg, &s.endAt)
}

// nullID maps the zero ID (or time) to SQL NULL.
func nullID(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}
