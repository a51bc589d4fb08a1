package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
)

// ErrNotFound is returned for a message or segment that is not stored.
var ErrNotFound = errors.New("not found")

// StoredMessage is a message with what displaying it needs.
type StoredMessage struct {
	ID, GuildID, ChannelID, AuthorID int64
	AuthorName                       string
	CreatedAt, EditedAt              int64
	Content, Type                    string
	ReplyToID                        int64
	Attachments                      int
	SegmentID                        int64
}

const selectMessage = `SELECT ` + messageColumns + fromMessages

// memberName is the name a message's author goes by in its server: their
// nickname there, else their global name, else their username; never a
// nickname from another server (migration 0018). It reads m, c (the
// message's channel), u (its author) and sn (joinNickname).
const memberName = `COALESCE(NULLIF(sn.nickname, ''), NULLIF(u.display_name, ''), u.name)`

const joinNickname = ` LEFT JOIN server_nicknames sn ON sn.guild_id = COALESCE(c.guild_id, 0) AND sn.user_id = m.author_id `

const messageColumns = `m.id, COALESCE(c.guild_id, 0), m.channel_id, m.author_id,
	` + memberName + `, m.created_at, COALESCE(m.edited_at, 0),
	m.content, m.type, COALESCE(m.reply_to_id, 0), m.attachments, COALESCE(ms.segment_id, 0)`

const fromMessages = `
	FROM messages m
	JOIN channels c ON c.id = m.channel_id
	JOIN users u ON u.id = m.author_id` + joinNickname + `
	LEFT JOIN message_segments ms ON ms.message_id = m.id `

func scanMessages(rows *sql.Rows) ([]StoredMessage, error) {
	defer rows.Close()
	var out []StoredMessage
	for rows.Next() {
		var m StoredMessage
		if err := scanMessage(rows, &m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// scanMessage reads messageColumns, then extra.
func scanMessage(rows *sql.Rows, m *StoredMessage, extra ...any) error {
	return rows.Scan(append([]any{&m.ID, &m.GuildID, &m.ChannelID, &m.AuthorID, &m.AuthorName, &m.CreatedAt,
		&m.EditedAt, &m.Content, &m.Type, &m.ReplyToID, &m.Attachments, &m.SegmentID}, extra...)...)
}

func (db *DB) queryMessages(ctx context.Context, q string, args ...any) ([]StoredMessage, error) {
	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanMessages(rows)
}

// preparedMessages is queryMessages for a fixed query text that searches
// repeat.
func (db *DB) preparedMessages(ctx context.Context, q string, args ...any) ([]StoredMessage, error) {
	st, err := db.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return scanMessages(rows)
}

// Message returns one message.
func (db *DB) Message(ctx context.Context, id int64) (*StoredMessage, error) {
	ms, err := db.queryMessages(ctx, selectMessage+`WHERE m.id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, ErrNotFound
	}
	return &ms[0], nil
}

// Neighbours returns up to before and after messages of the same channel
// around m, in time order.
func (db *DB) Neighbours(ctx context.Context, m *StoredMessage, before, after int) (prev, next []StoredMessage, err error) {
	if before > 0 {
		prev, err = db.preparedMessages(ctx, selectMessage+`WHERE m.channel_id = ? AND (m.created_at, m.id) < (?, ?)
			ORDER BY m.created_at DESC, m.id DESC LIMIT ?`, m.ChannelID, m.CreatedAt, m.ID, before)
		if err != nil {
			return nil, nil, err
		}
		slices.Reverse(prev)
	}
	if after > 0 {
		next, err = db.preparedMessages(ctx, selectMessage+`WHERE m.channel_id = ? AND (m.created_at, m.id) > (?, ?)
			ORDER BY m.created_at, m.id LIMIT ?`, m.ChannelID, m.CreatedAt, m.ID, after)
	}
	return prev, next, err
}

// Segment is a stored conversation segment.
type Segment struct {
	ID, ChannelID                int64
	StartMessageID, EndMessageID int64
	StartAt, EndAt               int64
	MessageCount                 int
	Revision                     int64
}

// Segment returns a segment and up to limit of its messages in time order.
func (db *DB) Segment(ctx context.Context, id int64, limit int) (*Segment, []StoredMessage, error) {
	var s Segment
	err := db.db.QueryRowContext(ctx, `SELECT id, channel_id, start_message_id, end_message_id, start_at, end_at,
		message_count, revision FROM segments WHERE id = ?`, id).
		Scan(&s.ID, &s.ChannelID, &s.StartMessageID, &s.EndMessageID, &s.StartAt, &s.EndAt, &s.MessageCount, &s.Revision)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	ms, err := db.queryMessages(ctx, selectMessage+`WHERE ms.segment_id = ? ORDER BY m.created_at, m.id LIMIT ?`, id, limit)
	return &s, ms, err
}

// SegmentIDs returns the IDs of a channel's segments in start order (all
// channels when channel is 0).
func (db *DB) SegmentIDs(ctx context.Context, channel int64) ([]int64, error) {
	q, args := `SELECT id FROM segments ORDER BY channel_id, start_at, id`, []any(nil)
	if channel != 0 {
		q, args = `SELECT id FROM segments WHERE channel_id = ? ORDER BY start_at, id`, []any{channel}
	}
	return queryIDs(ctx, db.db, q, args...)
}

// SegmentsOf maps each given message to its segment.
func (db *DB) SegmentsOf(ctx context.Context, ids []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	st, err := db.prepared(ctx, `SELECT message_id, segment_id FROM message_segments
		WHERE message_id IN (SELECT value FROM json_each(?))`)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, jsonIDs(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var m, s int64
		if err := rows.Scan(&m, &s); err != nil {
			return nil, err
		}
		out[m] = s
	}
	return out, rows.Err()
}

// jsonIDs is ids as one JSON array, for `IN (SELECT value FROM
// json_each(?))`: one statement text for any number of IDs, prepared once
// (every search asks for its page and its 100 hits).
func jsonIDs(ids []int64) string {
	b, _ := json.Marshal(ids) // []int64 always marshals
	return string(b)
}

// MessagesAround returns the given messages and the messages just before
// and after each in its channel, as Neighbours(m, 1, 1) finds them, in one
// statement (a page of keyword results shows each hit between them);
// around maps each given message found to its neighbours' IDs (0: none).
func (db *DB) MessagesAround(ctx context.Context, ids []int64) (msgs map[int64]StoredMessage, around map[int64][2]int64, err error) {
	msgs, around = map[int64]StoredMessage{}, map[int64][2]int64{}
	if len(ids) == 0 {
		return msgs, around, nil
	}
	// Each given message is read once for its channel and time, its
	// neighbours are two seeks in messages_channel_time, and the rows
	// listed (given, then neighbours, a message listed twice read twice)
	// are joined without a set built to look them up: that, and the
	// given messages read a second time, was a third of its cost.
	st, err := db.prepared(ctx, `WITH page(id, channel_id, created_at) AS MATERIALIZED (SELECT m.id, m.channel_id, m.created_at
			FROM messages m WHERE m.id IN (SELECT value FROM json_each(?))),
		around(id, prev, next) AS MATERIALIZED (SELECT g.id,
			COALESCE((SELECT p.id FROM messages p WHERE p.channel_id = g.channel_id AND (p.created_at, p.id) < (g.created_at, g.id)
				ORDER BY p.created_at DESC, p.id DESC LIMIT 1), 0),
			COALESCE((SELECT n.id FROM messages n WHERE n.channel_id = g.channel_id AND (n.created_at, n.id) > (g.created_at, g.id)
				ORDER BY n.created_at, n.id LIMIT 1), 0)
			FROM page g),
		listed(id, given, prev, next) AS (SELECT id, 1, prev, next FROM around
			UNION ALL SELECT prev, 0, 0, 0 FROM around WHERE prev <> 0
			UNION ALL SELECT next, 0, 0, 0 FROM around WHERE next <> 0)
	SELECT `+messageColumns+`, l.given, l.prev, l.next FROM listed l CROSS JOIN messages m ON m.id = l.id
	JOIN channels c ON c.id = m.channel_id
	JOIN users u ON u.id = m.author_id`+joinNickname+`
	LEFT JOIN message_segments ms ON ms.message_id = m.id`)
	if err != nil {
		return nil, nil, err
	}
	rows, err := st.QueryContext(ctx, jsonIDs(ids))
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var m StoredMessage
		var given bool
		var prev, next int64
		if err := scanMessage(rows, &m, &given, &prev, &next); err != nil {
			return nil, nil, err
		}
		msgs[m.ID] = m
		if given {
			around[m.ID] = [2]int64{prev, next}
		}
	}
	return msgs, around, rows.Err()
}

// EachSegmentMembers calls fn with every segment's message IDs.
func (db *DB) EachSegmentMembers(ctx context.Context, fn func(seg int64, msgs []int64) error) error {
	rows, err := db.db.QueryContext(ctx, `SELECT ms.segment_id, ms.message_id FROM message_segments ms
		JOIN messages m ON m.id = ms.message_id ORDER BY ms.segment_id, m.created_at, m.id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var cur int64
	var msgs []int64
	for rows.Next() {
		var s, m int64
		if err := rows.Scan(&s, &m); err != nil {
			return err
		}
		if s != cur && len(msgs) > 0 {
			if err := fn(cur, msgs); err != nil {
				return err
			}
			msgs = nil
		}
		cur = s
		msgs = append(msgs, m)
	}
	if len(msgs) > 0 {
		if err := fn(cur, msgs); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ChannelName is a channel or thread a user can name.
type ChannelName struct {
	ID, GuildID int64
	Name, Kind  string
	ParentID    int64 // a thread's channel (a channel's is its category)
}

// Channels lists the named channels and threads that hold messages, by
// name: what a user may type for --channel, and how a result's channel is
// shown.
func (db *DB) Channels(ctx context.Context) ([]ChannelName, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT c.id, COALESCE(c.guild_id, 0), c.name, c.kind, COALESCE(c.parent_id, 0) FROM channels c
		WHERE c.name != '' AND EXISTS (SELECT 1 FROM messages m WHERE m.channel_id = c.id)
		ORDER BY c.name, c.id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ChannelName
	for rows.Next() {
		var c ChannelName
		if err := rows.Scan(&c.ID, &c.GuildID, &c.Name, &c.Kind, &c.ParentID); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// queryIDs runs a query of one integer column and returns its values.
func queryIDs(ctx context.Context, q querier, query string, args ...any) ([]int64, error) {
	var ids []int64
	err := scanIDs(ctx, q, func(id int64) { ids = append(ids, id) }, query, args...)
	return ids, err
}

// addIDs adds the IDs a query lists to the set out.
func addIDs(ctx context.Context, q querier, out map[int64]bool, query string, args ...any) error {
	return scanIDs(ctx, q, func(id int64) { out[id] = true }, query, args...)
}

// querier is a database or a transaction.
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// preparing is a querier that prepares each query text once
// (db.prepared), for the statements every search runs.
type preparing struct{ db *DB }

func (p preparing) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.db.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func scanIDs(ctx context.Context, q querier, each func(int64), query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		each(id)
	}
	return rows.Err()
}
