package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Filter restricts a search; zero values mean no restriction. Times are
// inclusive bounds in µs. Channels include their public threads.
type Filter struct {
	Authors, Channels []int64
	Since, Until      int64
}

// Empty reports whether f restricts nothing.

// publicThread is the condition on a channel row that makes it a public
// thread, which a filter naming its parent brings (whoever reads the
// parent reads it): named kinds, not "anything but a private thread",
// which let a category bring its channels and a thread of unknown kind
// pass as public.
const publicThread = `kind IN ('GuildPublicThread', 'GuildNewsThread')`

func (f *Filter) Empty() bool {
	return len(f.Authors) == 0 && len(f.Channels) == 0 && f.Since == 0 && f.Until == 0
}

// where renders f as conditions on messages aliased m.
func (f *Filter) where() (string, []any) {
	var conds []string
	var args []any
	in := func(col string, ids []int64) {
		if len(ids) == 0 {
			return
		}
		conds = append(conds, col+" IN ("+marks(len(ids))+")")
		for _, id := range ids {
			args = append(args, id)
		}
	}
	in("m.author_id", f.Authors)
	if len(f.Channels) > 0 {
		// A channel brings its public threads: they are readable by whoever
		// reads the channel. A private thread must be named itself.
		list := marks(len(f.Channels))
		conds = append(conds, "(m.channel_id IN ("+list+") OR m.channel_id IN (SELECT id FROM channels WHERE parent_id IN ("+list+
			") AND "+publicThread+"))")
		for range 2 {
			for _, id := range f.Channels {
				args = append(args, id)
			}
		}
	}
	if f.Since != 0 {
		conds = append(conds, "m.created_at >= ?")
		args = append(args, f.Since)
	}
	if f.Until != 0 {
		conds = append(conds, "m.created_at <= ?")
		args = append(args, f.Until)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// WithThreads is f with its channels' public threads listed, as where
// reads a channel, for a search that runs outside SQL (the in-memory
// keyword index).
func (db *DB) WithThreads(ctx context.Context, f Filter) (Filter, error) {
	if len(f.Channels) == 0 {
		return f, nil
	}
	channels, err := db.channelsWithThreads(ctx, f.Channels)
	if err != nil {
		return f, err
	}
	f.Channels = slices.Sorted(maps.Keys(channels))
	return f, nil
}

// channelsWithThreads expands a channel filter as where does: each
// channel and its public threads.
func (db *DB) channelsWithThreads(ctx context.Context, ids []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	for _, id := range ids {
		out[id] = true
	}
	err := inChunks(ids, func(chunk []any) error {
		return addIDs(ctx, preparing{db}, out, `SELECT id FROM channels WHERE parent_id IN (`+marks(len(chunk))+`)
			AND `+publicThread, chunk...)
	})
	return out, err
}

func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// LexicalHit is a message found by keyword search.
type LexicalHit struct {
	MessageID, SegmentID, AuthorID int64
	Score                          float64 // BM25, higher is better
}

// Lexical runs an FTS5 MATCH expression (see lexical.MatchExpr) with the
// filter and returns up to limit messages by BM25.
//
// FTS5 ranks its matches fastest on its own, so the best candidates come
// from the index alone and only they are joined with messages and
// filtered; when a selective filter leaves too few of them, the query
// runs again over every match.
func (db *DB) Lexical(ctx context.Context, expr string, f Filter, limit int) ([]LexicalHit, error) {
	const candidates = 2000
	where, args := f.where()
	const cols = `SELECT m.id, COALESCE(ms.segment_id, 0), m.author_id, c.score FROM `
	const join = ` c JOIN messages m ON m.id = c.rowid LEFT JOIN message_segments ms ON ms.message_id = m.id WHERE 1=1`
	fast := cols + `(SELECT rowid, -bm25(messages_fts) AS score FROM messages_fts WHERE messages_fts MATCH ?
		ORDER BY bm25(messages_fts) LIMIT ` + strconv.Itoa(candidates) + `)` + join + where + ` ORDER BY c.score DESC, m.id LIMIT ?`
	hits, err := db.lexical(ctx, fast, append(append([]any{expr}, args...), limit)...)
	if err != nil || len(hits) >= limit || f.Empty() {
		return hits, err
	}
	all := cols + `(SELECT rowid, -bm25(messages_fts) AS score FROM messages_fts WHERE messages_fts MATCH ?)` +
		join + where + ` ORDER BY c.score DESC, m.id LIMIT ?`
	return db.lexical(ctx, all, append(append([]any{expr}, args...), limit)...)
}

// Matching returns the messages that match an FTS5 MATCH expression
// (see lexical.MatchExpr): a keyword phrase's check, which needs the word
// positions only FTS5 keeps. One query, however many candidates are
// checked against it.
func (db *DB) Matching(ctx context.Context, expr string) (map[int64]bool, error) {
	out := map[int64]bool{}
	err := addIDs(ctx, preparing{db}, out, `SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?`, expr)
	return out, err
}

func (db *DB) lexical(ctx context.Context, q string, args ...any) ([]LexicalHit, error) {
	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []LexicalHit
	for rows.Next() {
		var h LexicalHit
		if err := rows.Scan(&h.MessageID, &h.SegmentID, &h.AuthorID, &h.Score); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// SegmentsMatching returns the segments holding a message that passes f
// (and, if expr is not empty, matches it). nil means "every segment"
// (no restriction at all).
func (db *DB) SegmentsMatching(ctx context.Context, expr string, f Filter) ([]int64, error) {
	if expr == "" && f.Empty() {
		return nil, nil
	}
	where, args := f.where()
	q := `SELECT DISTINCT ms.segment_id AS v FROM messages m JOIN message_segments ms ON ms.message_id = m.id WHERE 1=1` + where
	switch {
	case expr == "" && len(f.Channels) > 0 && len(f.Authors) == 0 && f.Since == 0 && f.Until == 0:
		// A segment lies in one channel: its channel answers without a
		// look at each message (80,000 in a busy channel: a third of a
		// second, where this takes a few milliseconds).
		list := marks(len(f.Channels))
		q = `SELECT id AS v FROM segments WHERE channel_id IN (` + list + `) OR channel_id IN (SELECT id FROM channels WHERE parent_id IN (` +
			list + `) AND ` + publicThread + `)`
	case expr != "" && f.Empty():
		q = `SELECT DISTINCT ms.segment_id AS v FROM message_segments ms
			WHERE ms.message_id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)`
		args = []any{expr}
	case expr != "":
		q = `SELECT DISTINCT ms.segment_id AS v FROM messages m JOIN message_segments ms ON ms.message_id = m.id
			WHERE m.id IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)` + where
		args = append([]any{expr}, args...)
	}
	return listIDs(ctx, db.db, q, args...)
}

// listIDs runs query, of one integer column named v, and returns its
// values. SQLite joins them into one text: reading them a row at a time
// through database/sql took three times as long (a member's readable
// channels at 6.5 M messages, 750,000 segments: 0.6 s against 0.2 s).
func listIDs(ctx context.Context, q querier, query string, args ...any) ([]int64, error) {
	var list sql.NullString
	rows, err := q.QueryContext(ctx, "SELECT group_concat(v) FROM ("+query+")", args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		if err := rows.Scan(&list); err != nil {
			rows.Close()
			return nil, err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ids := make([]int64, 0, strings.Count(list.String, ",")+1)
	for f := range strings.SplitSeq(list.String, ",") {
		if f == "" {
			continue
		}
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("reading IDs: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// SegmentsOfMessages returns the segments holding one of the messages
// that passes f: SegmentsMatching for the messages another index found.
func (db *DB) SegmentsOfMessages(ctx context.Context, ids []int64, f Filter) (map[int64]bool, error) {
	where, args := f.where()
	out := map[int64]bool{}
	return out, addIDs(ctx, db.db, out, `SELECT DISTINCT ms.segment_id FROM messages m JOIN message_segments ms ON ms.message_id = m.id
		WHERE m.id IN (SELECT value FROM json_each(?))`+where, append([]any{jsonIDs(ids)}, args...)...)
}

// SegmentInfo is what a search result shows of a segment.
type SegmentInfo struct {
	ID, ChannelID, GuildID int64
	StartMessageID         int64
	StartAt, EndAt         int64
	MessageCount           int
	// Revision is the segment's when read (SegmentsInRange only): what a
	// summary of the messages read after it is saved at (SaveSummary).
	Revision int64
}

// SegmentInfos returns the segments with the given IDs.
func (db *DB) SegmentInfos(ctx context.Context, ids []int64) (map[int64]SegmentInfo, error) {
	out := map[int64]SegmentInfo{}
	if len(ids) == 0 {
		return out, nil
	}
	// Every search by meaning shows its page's segments: one statement
	// text for any number of them, prepared once (jsonIDs).
	rows, err := preparing{db}.QueryContext(ctx, `SELECT s.id, s.channel_id, COALESCE(c.guild_id, 0), s.start_message_id,
		s.start_at, s.end_at, s.message_count FROM segments s JOIN channels c ON c.id = s.channel_id
		WHERE s.id IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var s SegmentInfo
		if err := rows.Scan(&s.ID, &s.ChannelID, &s.GuildID, &s.StartMessageID, &s.StartAt, &s.EndAt, &s.MessageCount); err != nil {
			return nil, err
		}
		out[s.ID] = s
	}
	return out, rows.Err()
}

// SegmentMessages returns up to limit messages of each segment, in time
// order, in one query: what people said, without Discord's notices (joins,
// calls, pins), which are history but not the conversation.
func (db *DB) SegmentMessages(ctx context.Context, ids []int64, limit int) (map[int64][]StoredMessage, error) {
	out := map[int64][]StoredMessage{}
	if len(ids) == 0 {
		return out, nil
	}
	// Every search by meaning reads its segments' messages (rescoring,
	// judging, previews): prepared once, the IDs as one JSON array.
	ms, err := db.preparedMessages(ctx, selectMessage+`WHERE m.id IN (
			SELECT message_id FROM (
				SELECT ms2.message_id, ROW_NUMBER() OVER (PARTITION BY ms2.segment_id ORDER BY m2.created_at, m2.id) AS n
				FROM message_segments ms2 JOIN messages m2 ON m2.id = ms2.message_id
				WHERE ms2.segment_id IN (SELECT value FROM json_each(?)) AND m2.type IN `+spokenTypes+`)
			WHERE n <= ?)
			ORDER BY ms.segment_id, m.created_at, m.id`, jsonIDs(ids), limit)
	for _, m := range ms {
		out[m.SegmentID] = append(out[m.SegmentID], m)
	}
	return out, err
}

// Messages returns the messages with the given IDs.
func (db *DB) Messages(ctx context.Context, ids []int64) (map[int64]StoredMessage, error) {
	out := make(map[int64]StoredMessage, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	ms, err := db.preparedMessages(ctx, selectMessage+`WHERE m.id IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
	for _, m := range ms {
		out[m.ID] = m
	}
	return out, err
}

// MessageVectors returns the stored vectors of the given messages (those
// that have one).
func (db *DB) MessageVectors(ctx context.Context, ids []int64, dim int) (map[int64][]float32, error) {
	out := map[int64][]float32{}
	keep := func(id int64, _ int, v []float32) { out[id] = append([]float32(nil), v...) }
	err := inChunks(ids, func(chunk []any) error {
		return db.eachVector(ctx, make([]float32, dim), keep, `SELECT message_id, 0, vector FROM message_vectors
			WHERE vector IS NOT NULL AND message_id IN (`+marks(len(chunk))+`)`, chunk...)
	})
	return out, err
}

// inChunks calls fn with ids as query arguments, 500 at a time.
func inChunks(ids []int64, fn func([]any) error) error {
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		if err := fn(args); err != nil {
			return err
		}
	}
	return nil
}

// SegmentsInRange returns up to limit conversations of a channel that
// have a message in [since, until] (0: unbounded), newest first: segments
// of Discord's notices alone (a call, a join) are not conversations.
func (db *DB) SegmentsInRange(ctx context.Context, channel, since, until int64, limit int) ([]SegmentInfo, error) {
	if until == 0 {
		until = math.MaxInt64
	}
	rows, err := db.db.QueryContext(ctx, `SELECT s.id, s.channel_id, COALESCE(c.guild_id, 0), s.start_message_id,
		s.start_at, s.end_at, s.message_count, s.revision FROM segments s JOIN channels c ON c.id = s.channel_id
		WHERE s.channel_id = ? AND s.end_at >= ? AND s.start_at <= ?
			AND EXISTS (SELECT 1 FROM message_segments ms JOIN messages m ON m.id = ms.message_id
				WHERE ms.segment_id = s.id AND `+spoken+`)
		ORDER BY s.end_at DESC, s.id DESC LIMIT ?`, channel, since, until, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SegmentInfo
	for rows.Next() {
		var s SegmentInfo
		if err := rows.Scan(&s.ID, &s.ChannelID, &s.GuildID, &s.StartMessageID, &s.StartAt, &s.EndAt, &s.MessageCount, &s.Revision); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Summary is a cached one-line summary of a segment.
type Summary struct {
	Text     string
	Keywords []string
}

// CachedSummary returns the summary of a segment made by model at its
// current revision, or nil.
func (db *DB) CachedSummary(ctx context.Context, segment int64, model string) (*Summary, error) {
	var s Summary
	var kw string
	err := db.db.QueryRowContext(ctx, `SELECT ss.summary, ss.keywords FROM segment_summaries ss
		JOIN segments s ON s.id = ss.segment_id AND s.revision = ss.revision
		WHERE ss.segment_id = ? AND ss.model = ?`, segment, model).Scan(&s.Text, &kw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &s, json.Unmarshal([]byte(kw), &s.Keywords)
}

// SaveSummary caches a segment's summary at revision, the segment's when
// its messages were read, and only if the segment is still at it: a
// message edited, deleted or opted out while the LLM wrote the summary
// moved the revision, and the summary of the old text is not kept (nor,
// since segment IDs are never reused, put on another conversation).
func (db *DB) SaveSummary(ctx context.Context, segment, revision int64, model string, s Summary) error {
	kw, err := json.Marshal(s.Keywords)
	if err != nil {
		return err
	}
	return db.writeAside(ctx, "NORMAL", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO segment_summaries (segment_id, revision, model, summary, keywords)
			SELECT id, revision, ?, ?, ? FROM segments WHERE id = ? AND revision = ?
			ON CONFLICT (segment_id) DO UPDATE SET revision = excluded.revision, model = excluded.model,
				summary = excluded.summary, keywords = excluded.keywords`, model, s.Text, string(kw), segment, revision)
		return err
	})
}

// MessageCount is the number of stored messages.
func (db *DB) MessageCount(ctx context.Context) (int64, error) {
	var n int64
	err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages`).Scan(&n)
	return n, err
}
