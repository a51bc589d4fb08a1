package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// ErrModelMismatch means the database holds vectors of another model.
var ErrModelMismatch = errors.New("embedding model mismatch")

// CheckModel records the embedding model on first use and refuses a
// different one: vectors of two models must never be mixed. weights
// tells networks of one name apart (embed.Model.Weights: a conversion of
// another version, another network copied in); "" checks name and
// dimension only, and a database that recorded none takes it now.
func (db *DB) CheckModel(ctx context.Context, name string, dim int, weights string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		var have string
		err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'embedding_model'`).Scan(&have)
		if errors.Is(err, sql.ErrNoRows) {
			return setModel(ctx, tx, name, dim, weights)
		}
		if err != nil {
			return err
		}
		var haveDim, haveWeights string
		tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'embedding_dim'`).Scan(&haveDim)
		tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'embedding_weights'`).Scan(&haveWeights)
		if have != name || haveDim != strconv.Itoa(dim) {
			return fmt.Errorf("%w: the database holds vectors of %s (%s dimensions) but the configured model is %s (%d); run `searchd reindex` to re-embed everything with the new model, or configure the old one",
				ErrModelMismatch, have, haveDim, name, dim)
		}
		switch {
		case weights == "":
		case haveWeights == "":
			return setMeta(ctx, tx, "embedding_weights", weights)
		case haveWeights != weights:
			return fmt.Errorf("%w: the database holds vectors of %s with other weights (%s) than the configured model's (%s): another conversion or version of it; run `searchd reindex` to re-embed everything with it, or configure the old one",
				ErrModelMismatch, name, haveWeights, weights)
		}
		return nil
	})
}

func setModel(ctx context.Context, tx *sql.Tx, name string, dim int, weights string) error {
	if err := setMeta(ctx, tx, "embedding_model", name); err != nil {
		return err
	}
	if err := setMeta(ctx, tx, "embedding_weights", weights); err != nil {
		return err
	}
	return setMeta(ctx, tx, "embedding_dim", strconv.Itoa(dim))
}

// ResetVectors deletes every vector and records the new model, in one
// transaction: the start of a reindex.
func (db *DB) ResetVectors(ctx context.Context, name string, dim int, weights string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM segment_windows`, `DELETE FROM segment_vectors`, `DELETE FROM message_vectors`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		if err := bumpIndexVersion(ctx, tx); err != nil {
			return err
		}
		if err := raiseCursorFloor(ctx, tx); err != nil {
			return err
		}
		return setModel(ctx, tx, name, dim, weights)
	})
}

// PendingSegment is a segment whose vector is missing or stale.
type PendingSegment struct {
	ID, Revision int64
	// Contents are its first messages' texts, in time order, and
	// MessageIDs their IDs.
	Contents   []string
	MessageIDs []int64
	// WindowsOnly: the vector is current but predates windows.
	WindowsOnly bool
}

// PendingSegments returns up to limit segments after ID `after` whose
// vector is missing or older than their revision, or (unless
// withoutVector) provisional (pooled) or from before windows, each with
// up to maxMessages message texts.
func (db *DB) PendingSegments(ctx context.Context, after int64, limit, maxMessages int, withoutVector bool) ([]PendingSegment, error) {
	also := ` OR v.windowed = 0 AND v.vector IS NOT NULL OR v.pooled = 1`
	if withoutVector {
		also = ""
	}
	rows, err := db.db.QueryContext(ctx, `SELECT s.id, s.revision, v.segment_id IS NOT NULL AND v.revision = s.revision AND v.pooled = 0 FROM segments s
		LEFT JOIN segment_vectors v ON v.segment_id = s.id
		WHERE s.id > ? AND (v.segment_id IS NULL OR v.revision != s.revision`+also+`)
		ORDER BY s.id LIMIT ?`, after, limit)
	if err != nil {
		return nil, err
	}
	var out []PendingSegment
	for rows.Next() {
		var p PendingSegment
		if err := rows.Scan(&p.ID, &p.Revision, &p.WindowsOnly); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		// Discord's notices (joins, calls, pins) are not what the
		// conversation was about: they stay out of its text.
		rows, err := db.db.QueryContext(ctx, `SELECT m.id, m.content FROM message_segments ms JOIN messages m ON m.id = ms.message_id
			WHERE ms.segment_id = ? AND `+spoken+` ORDER BY m.created_at, m.id LIMIT ?`, out[i].ID, maxMessages)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			var c string
			if err := rows.Scan(&id, &c); err != nil {
				rows.Close()
				return nil, err
			}
			out[i].Contents = append(out[i].Contents, c)
			out[i].MessageIDs = append(out[i].MessageIDs, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SegmentVector is a computed vector; nil Vector marks a segment whose
// text is too short to embed. Vector is the segment's first window;
// Windows are the rest of a segment too long for the model's input.
// WindowsOnly saves the windows and keeps the stored vector. Pooled marks
// a provisional vector, the mean of the segment's message vectors.
type SegmentVector struct {
	ID, Revision int64
	Vector       []float32
	Windows      []Window
	WindowsOnly  bool
	Pooled       bool
}

// Window is the vector of a segment's messages from message First (time
// order, 0-based) on.
type Window struct {
	First  int
	Vector []float32
}

// SaveSegmentVectors stores vectors in one transaction. A vector is kept
// only if its segment still has the revision it was computed for; it
// returns those kept.
func (db *DB) SaveSegmentVectors(ctx context.Context, vs []SegmentVector) ([]SegmentVector, error) {
	var saved []SegmentVector
	err := db.writeAside(ctx, "NORMAL", func(tx *sql.Tx) error {
		saved = saved[:0]
		st, err := tx.PrepareContext(ctx, `INSERT INTO segment_vectors (segment_id, revision, vector, windowed, pooled)
			SELECT id, revision, ?, 1, ? FROM segments WHERE id = ? AND revision = ?
			ON CONFLICT (segment_id) DO UPDATE SET revision = excluded.revision, vector = excluded.vector, windowed = 1, pooled = excluded.pooled`)
		if err != nil {
			return err
		}
		defer st.Close()
		mark, err := tx.PrepareContext(ctx, `UPDATE segment_vectors SET windowed = 1
			WHERE segment_id = ? AND revision = ? AND revision = (SELECT revision FROM segments WHERE id = segment_id)`)
		if err != nil {
			return err
		}
		defer mark.Close()
		clear, err := tx.PrepareContext(ctx, `DELETE FROM segment_windows WHERE segment_id = ?`)
		if err != nil {
			return err
		}
		defer clear.Close()
		win, err := tx.PrepareContext(ctx, `INSERT INTO segment_windows (segment_id, window, first_message, vector) VALUES (?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer win.Close()
		for _, v := range vs {
			var r sql.Result
			if v.WindowsOnly {
				r, err = mark.ExecContext(ctx, v.ID, v.Revision)
			} else {
				r, err = st.ExecContext(ctx, EncodeVector(v.Vector), v.Pooled, v.ID, v.Revision)
			}
			if err != nil {
				return err
			}
			if n, _ := r.RowsAffected(); n == 0 {
				continue // the segment changed since
			}
			if _, err := clear.ExecContext(ctx, v.ID); err != nil {
				return err
			}
			for i, w := range v.Windows {
				if _, err := win.ExecContext(ctx, v.ID, i+1, w.First, EncodeVector(w.Vector)); err != nil {
					return err
				}
			}
			saved = append(saved, v)
		}
		// No index version bump: new vectors are not new messages, and
		// cursors must outlive the hours of a first embedding pass.
		return nil
	})
	return saved, err
}

// CurrentVectorsOf returns which of ids have a current stored vector
// (their segment exists, unchanged since it was embedded).
func (db *DB) CurrentVectorsOf(ctx context.Context, ids []int64) (map[int64]bool, error) {
	out := make(map[int64]bool, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	// Every semantic search asks this of its top segments.
	return out, addIDs(ctx, preparing{db}, out, `SELECT v.segment_id FROM segment_vectors v
		JOIN segments s ON s.id = v.segment_id AND s.revision = v.revision
		WHERE v.vector IS NOT NULL AND v.segment_id IN (SELECT value FROM json_each(?))`, jsonIDs(ids))
}

// CurrentSegmentVectorIDs lists the segments whose stored vector is
// current (not stale, not too short).
func (db *DB) CurrentSegmentVectorIDs(ctx context.Context) (map[int64]bool, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT v.segment_id FROM segment_vectors v
		JOIN segments s ON s.id = v.segment_id AND s.revision = v.revision WHERE v.vector IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids[id] = true
	}
	return ids, rows.Err()
}

// PendingMessage is a message without a vector.
type PendingMessage struct {
	ID      int64
	Content string
}

// PendingMessages returns up to limit messages from ID `from` on that
// have no vector row; Discord's notices come with no content. Message IDs may be negative (snowflakes of converted
// archives older than Discord, 2015), so a first page starts from
// math.MinInt64, not 0.
func (db *DB) PendingMessages(ctx context.Context, from int64, limit int) ([]PendingMessage, error) {
	// A notice's content is left out: it is stored "too short", so it
	// never rescores a result.
	rows, err := db.db.QueryContext(ctx, `SELECT m.id, CASE WHEN `+spoken+` THEN m.content ELSE '' END FROM messages m
		WHERE m.id >= ? AND NOT EXISTS (SELECT 1 FROM message_vectors v WHERE v.message_id = m.id)
		ORDER BY m.id LIMIT ?`, from, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []PendingMessage
	for rows.Next() {
		var p PendingMessage
		if err := rows.Scan(&p.ID, &p.Content); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// MessageVector is a computed message vector; nil marks one too short.
type MessageVector struct {
	ID      int64
	Content string // the text it was computed from
	Vector  []float32
}

// SaveMessageVectors stores vectors of messages whose text is still the
// one embedded, in one transaction, and returns how many it stored.
func (db *DB) SaveMessageVectors(ctx context.Context, vs []MessageVector) (int, error) {
	var saved int
	err := db.writeAside(ctx, "NORMAL", func(tx *sql.Tx) error {
		// The text compared is the one PendingMessages hands out: a
		// notice's is empty, so its (empty) vector row is stored too.
		st, err := tx.PrepareContext(ctx, `INSERT INTO message_vectors (message_id, vector)
			SELECT id, ? FROM messages m WHERE id = ? AND (CASE WHEN `+spoken+` THEN m.content ELSE '' END) = ?
			ON CONFLICT (message_id) DO UPDATE SET vector = excluded.vector`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, v := range vs {
			r, err := st.ExecContext(ctx, EncodeVector(v.Vector), v.ID, v.Content)
			if err != nil {
				return err
			}
			n, _ := r.RowsAffected()
			saved += int(n)
		}
		return nil
	})
	return saved, err
}

// EachSegmentVector calls fn for every window of every current segment
// vector: first the segments' first windows in ID order, then the further
// windows in (ID, window) order. vec is only valid during the call.
func (db *DB) EachSegmentVector(ctx context.Context, dim int, fn func(id int64, first int, vec []float32)) error {
	return db.segmentVectors(ctx, dim, fn, "", nil)
}

// SegmentVectors is EachSegmentVector for the segments ids.
func (db *DB) SegmentVectors(ctx context.Context, ids []int64, dim int, fn func(id int64, first int, vec []float32)) error {
	return inChunks(ids, func(chunk []any) error {
		return db.segmentVectors(ctx, dim, fn, " AND v.segment_id IN ("+marks(len(chunk))+")", chunk)
	})
}

func (db *DB) segmentVectors(ctx context.Context, dim int, fn func(id int64, first int, vec []float32), where string, args []any) error {
	vec := make([]float32, dim)
	err := db.eachVector(ctx, vec, fn, `SELECT v.segment_id, 0, v.vector FROM segment_vectors v
		JOIN segments s ON s.id = v.segment_id AND s.revision = v.revision
		WHERE v.vector IS NOT NULL`+where+` ORDER BY v.segment_id`, args...)
	if err != nil {
		return err
	}
	return db.eachVector(ctx, vec, fn, `SELECT v.segment_id, w.first_message, w.vector FROM segment_vectors v
		JOIN segments s ON s.id = v.segment_id AND s.revision = v.revision
		JOIN segment_windows w ON w.segment_id = v.segment_id
		WHERE v.vector IS NOT NULL`+where+` ORDER BY v.segment_id, w.window`, args...)
}

// eachVector runs a query of (id, window start, vector) rows and decodes
// each vector into vec before calling fn.
func (db *DB) eachVector(ctx context.Context, vec []float32, fn func(int64, int, []float32), q string, args ...any) error {
	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var first int
		var b []byte
		if err := rows.Scan(&id, &first, &b); err != nil {
			return err
		}
		if err := decodeInto(vec, b); err != nil {
			return fmt.Errorf("vector of %d: %w", id, err)
		}
		fn(id, first, vec)
	}
	return rows.Err()
}

// EmbeddingCounts is how far embedding has come.
type EmbeddingCounts struct {
	// SegmentsDone have a current vector of their text (or are too
	// short); SegmentsPooled a provisional one (searched meanwhile).
	Segments, SegmentsDone, SegmentsTooShort, SegmentsPooled int64
	Messages, MessagesDone, MessagesTooShort                 int64
}

// EmbeddingCounts counts embedded and pending segments and messages.
func (db *DB) EmbeddingCounts(ctx context.Context) (*EmbeddingCounts, error) {
	var c EmbeddingCounts
	err := db.db.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM segments),
		(SELECT COUNT(*) FROM segment_vectors v JOIN segments s ON s.id = v.segment_id AND s.revision = v.revision WHERE v.pooled = 0),
		(SELECT COUNT(*) FROM segment_vectors v JOIN segments s ON s.id = v.segment_id AND s.revision = v.revision WHERE v.vector IS NULL),
		(SELECT COUNT(*) FROM segment_vectors v JOIN segments s ON s.id = v.segment_id AND s.revision = v.revision WHERE v.pooled = 1),
		(SELECT COUNT(*) FROM messages),
		(SELECT COUNT(*) FROM message_vectors),
		(SELECT COUNT(*) FROM message_vectors WHERE vector IS NULL)`).
		Scan(&c.Segments, &c.SegmentsDone, &c.SegmentsTooShort, &c.SegmentsPooled, &c.Messages, &c.MessagesDone, &c.MessagesTooShort)
	return &c, err
}

// EncodeVector is the storage form of a vector: a little-endian float32
// scale, then one int8 per dimension (x ≈ int8 · scale, scale = max|x|/127).
// A quarter of float32's size, which is what reading the vectors of a
// query's candidate messages costs; unit vectors lose nothing a ranking
// notices (docs/retrieval.md). nil stays nil (SQL NULL).
func EncodeVector(v []float32) []byte {
	if v == nil {
		return nil
	}
	var maxAbs float32
	for _, x := range v {
		maxAbs = max(maxAbs, x, -x)
	}
	scale := maxAbs / 127
	b := make([]byte, 4+len(v))
	binary.LittleEndian.PutUint32(b, math.Float32bits(scale))
	if scale == 0 {
		return b
	}
	for i, x := range v {
		b[4+i] = byte(int8(math.Round(float64(x / scale))))
	}
	return b
}

// decodeInto decodes a stored vector into dst, which must be its length.
// It also reads plain little-endian float32, the form of earlier versions.
func decodeInto(dst []float32, b []byte) error {
	switch len(b) {
	case 4 + len(dst):
		scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
		for i := range dst {
			dst[i] = float32(int8(b[4+i])) * scale
		}
	case 4 * len(dst):
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	default:
		return fmt.Errorf("stored vector has %d bytes, which fits no %d-dimensional form", len(b), len(dst))
	}
	return nil
}
