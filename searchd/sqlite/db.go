// Package sqlite stores messages and segments in SQLite (modernc.org/sqlite,
// pure Go).
package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"dsearch/migrations"
	"dsearch/searchd/lexical"
	"dsearch/searchd/segment"

	moderncsqlite "modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"
)

// FileName is the database file inside the data directory.
const FileName = "dsearch.db"

// maxIdleConns is more than the searches the server runs at once
// (server.Gate), each of which may hold two connections.
const maxIdleConns = 16

// DB is searchd's database.
type DB struct {
	db   *sql.DB
	path string
	// writeMu serializes this process's write transactions; SQLite allows
	// one writer, and busy_timeout covers other processes.
	writeMu sync.Mutex
	// writer is the connection this process writes on (under writeMu),
	// kept out of the pool so that the statements prepared on it and
	// what a batch's applier carries to the next (carry) stay valid;
	// writerLevel is its synchronous level.
	writer      *sql.Conn
	writerLevel string
	carry       *carried
	// now is the clock, replaceable in tests.
	now func() time.Time
	// stmts holds the prepared statements of the reads every search
	// repeats (query text → *sql.Stmt): preparing one in pure-Go SQLite
	// costs about as much as running it.
	stmts sync.Map
	// names caches AuthorNames while nothing is committed (names.go).
	names  namesCache
	purged purged // purge.go
}

// Open opens (creating if needed) the database in dir and applies pending
// migrations. dir is created 0700 (an existing one open to others is
// refused) and the database file 0600: messages are private.
func Open(ctx context.Context, dir string) (*DB, error) {
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	if err := settleRestore(dir); err != nil {
		return nil, err
	}
	return openFile(ctx, filepath.Join(dir, FileName))
}

// openFile opens (creating if needed) the database file at path and
// applies pending migrations; Open checks its directory first.
func openFile(ctx context.Context, path string) (*DB, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	f.Close()
	// Pragmas in the DSN apply to every pooled connection; _txlock makes
	// BEGIN take the write lock up front, so writers queue on busy_timeout
	// instead of failing to upgrade a read lock. synchronous(FULL): a
	// commit is on disk when it returns (write, writeBulk).
	// secure_delete(1): a deleted or forgotten message's bytes are zeroed
	// in the file, not left in free space for anyone who reads it raw
	// (the keyword index's own traces: migration 0019).
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=secure_delete(1)&_txlock=immediate"
	sqldb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// Concurrent searches each take a connection; database/sql keeps only
	// two idle by default and closes the rest after use, so each request
	// beyond two paid for a new connection and started with a cold page
	// cache (most of its time in read syscalls under load). Keep them, and
	// let them go after a quiet spell so their caches are freed.
	sqldb.SetMaxIdleConns(maxIdleConns)
	sqldb.SetConnMaxIdleTime(time.Minute)
	db := &DB{db: sqldb, path: path, now: time.Now, purged: purged{soon: make(chan struct{}, 1)}}
	// A WAL a crash left may hold what a write took out before its purge
	// (names forgotten are marked in memory only): the first purge
	// empties it.
	db.purged.dirty.Store(true)
	if err := db.migrate(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	if err := db.fillKeywordIndex(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	if err := db.hashImportPaths(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	if err := db.mergeKeywords(ctx); err != nil { // a bulk forget cut short
		sqldb.Close()
		return nil, err
	}
	return db, nil
}

// settleRestore makes sure no restore is midway before the database is
// opened (or created): a journaled one is completed under the data
// directory's lock (refused while another process holds it: a restore
// running now); one an older version left without a journal is refused.
// A process that holds the lock itself (serve) completed it in LockDir.
func settleRestore(dir string) error {
	j, err := pendingRestore(dir)
	if err != nil {
		return err
	}
	if j != nil {
		lock, err := LockDir(dir)
		if err != nil {
			return fmt.Errorf("a restore of %s is in progress or was cut short: %w", j.Backup, err)
		}
		lock.Release()
	}
	return checkNoRestoreLeft(dir)
}

// fillKeywordIndex builds the keyword index from the stored messages when
// a migration made it anew (0003, 0022): bigrams cannot be computed in
// SQL. It reads the messages a page at a time, in rowid order (FTS5
// flushes a segment whenever a rowid comes lower than the one before),
// and indexes what applier.indexText would.
func (db *DB) fillKeywordIndex(ctx context.Context) error {
	if v, err := db.Meta(ctx, "fts_ready"); err != nil || v == "1" {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, qIndex)
		if err != nil {
			return err
		}
		defer st.Close()
		type doc struct {
			id            int64
			text, msgType string
		}
		var page []doc
		for after := int64(math.MinInt64); ; after = page[len(page)-1].id {
			page = page[:0]
			rows, err := tx.QueryContext(ctx, `SELECT id, content, type FROM messages WHERE id > ? ORDER BY id LIMIT 10000`, after)
			if err != nil {
				return err
			}
			for rows.Next() {
				var d doc
				if err := rows.Scan(&d.id, &d.text, &d.msgType); err != nil {
					rows.Close()
					return err
				}
				page = append(page, d)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if len(page) == 0 {
				// Built anew: no page key of a deleted word (rewriteKeywords).
				if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value)
					SELECT 'keywords_rewritten', COALESCE((SELECT value FROM meta WHERE key = 'text_removed'), '0')
					ON CONFLICT (key) DO UPDATE SET value = excluded.value`); err != nil {
					return err
				}
				return setMeta(ctx, tx, "fts_ready", "1")
			}
			for _, d := range page {
				if segment.IsSystem(d.msgType) {
					continue
				}
				if _, err := st.ExecContext(ctx, d.id, d.text, lexical.Bigrams(d.text)); err != nil {
					return err
				}
			}
		}
	})
}

// IndexVersion grows with every change to messages (new, edited, deleted,
// forgotten) and with a reindex; writing vectors leaves it alone.
func (db *DB) IndexVersion(ctx context.Context) (int64, error) {
	v, err := db.Meta(ctx, "index_version")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// CursorVersion is what a page's cursor is checked against: it grows
// with every change to the messages of the given channels or their public
// threads (as a filter reads them), and with a change of every channel (a
// reindex, a restore); with no channels, IndexVersion. A cursor made for
// a member's channels is then never refused for a change they cannot
// read: a refusal for a change anywhere told them that channels they
// cannot read were busy.
func (db *DB) CursorVersion(ctx context.Context, channels []int64) (int64, error) {
	if len(channels) == 0 {
		return db.IndexVersion(ctx)
	}
	st, err := db.prepared(ctx, `WITH scope (id) AS (SELECT value FROM json_each(?1)
			UNION SELECT id FROM channels WHERE parent_id IN (SELECT value FROM json_each(?1)) AND `+publicThread+`)
		SELECT MAX(COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'cursor_floor'), 0),
			COALESCE((SELECT MAX(version) FROM channel_versions WHERE channel_id IN scope), 0))`)
	if err != nil {
		return 0, err
	}
	var v int64
	err = st.QueryRowContext(ctx, jsonIDs(channels)).Scan(&v)
	return v, err
}

// ChannelVersions is, for each of channels, the version its segments
// were last changed at: its messages' (channel_versions), or a change of
// every channel (a restore, a reindex), whichever is later. A segment
// changes only with its channel's messages.
func (db *DB) ChannelVersions(ctx context.Context, channels []int64) (map[int64]int64, error) {
	st, err := db.prepared(ctx, `SELECT j.value, MAX(COALESCE(v.version, 0),
			COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'cursor_floor'), 0))
		FROM json_each(?) j LEFT JOIN channel_versions v ON v.channel_id = j.value`)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, jsonIDs(channels))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int64]int64, len(channels))
	for rows.Next() {
		var ch, v int64
		if err := rows.Scan(&ch, &v); err != nil {
			return nil, err
		}
		out[ch] = v
	}
	return out, rows.Err()
}

// SegmentsOfChannel lists the segments of one channel (not its threads).
func (db *DB) SegmentsOfChannel(ctx context.Context, channel int64) ([]int64, error) {
	return listIDs(ctx, db.db, `SELECT id AS v FROM segments WHERE channel_id = ?`, channel)
}

// SegmentsEpoch grows whenever the segments a filter by channels admits
// can change (migration 0015): a segment created, deleted or moved, a
// channel's parent or kind set anew. New messages that join a segment
// leave it.
func (db *DB) SegmentsEpoch(ctx context.Context) (int64, error) {
	v, err := db.Meta(ctx, "segments_epoch")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// Close closes the database.
func (db *DB) Close() error {
	db.writeMu.Lock()
	db.dropWriter()
	db.writeMu.Unlock()
	db.names.mu.Lock()
	db.names.close()
	db.names.mu.Unlock()
	db.stmts.Range(func(_, st any) bool { st.(*sql.Stmt).Close(); return true })
	return db.db.Close()
}

// prepared returns the statement for a fixed query text, prepared once.
func (db *DB) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := db.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := db.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// ErrNewerSchema: the database was written by a newer searchd.
var ErrNewerSchema = errors.New("the database was made by a newer searchd")

// migrate applies each embedded migration not yet recorded, one
// transaction per file, in name order.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	// A migration this searchd does not know was applied by a newer one:
	// its code may rely on what that migration made (a table kept up, a
	// row never written again), so an older searchd must not write here.
	applied, err := queryStrings(ctx, db.db, `SELECT name FROM schema_migrations ORDER BY name`)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	for _, a := range applied {
		if !slices.Contains(names, a) {
			return fmt.Errorf("%w: it has migration %s, which this searchd (%d migrations, up to %s) does not know; run the newer searchd, or restore a backup made by this version",
				ErrNewerSchema, a, len(names), names[len(names)-1])
		}
	}
	for i, name := range names {
		if err := db.migrateOne(ctx, name, i+1); err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

func (db *DB) migrateOne(ctx context.Context, name string, version int) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		body, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`,
			name, db.now().UnixMicro()); err != nil {
			return err
		}
		return setMeta(ctx, tx, "schema_version", strconv.Itoa(version))
	})
}

// SchemaVersion is the number of migrations applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	v, err := db.Meta(ctx, "schema_version")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

// Meta returns a value of the meta table, or "" if unset.
func (db *DB) Meta(ctx context.Context, key string) (string, error) {
	st, err := db.prepared(ctx, `SELECT value FROM meta WHERE key = ?`) // every search reads the index version
	if err != nil {
		return "", err
	}
	var v string
	err = st.QueryRowContext(ctx, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// Generation names this database: a restore gives the restored copy a new
// one, so that the bot, which keeps its own sync marks, learns that what
// searchd holds was replaced (a fresh database gets one at its first ask).
func (db *DB) Generation(ctx context.Context) (string, error) {
	if g, err := db.Meta(ctx, generationKey); err != nil || g != "" {
		return g, err
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)`, generationKey, newGeneration())
		return err
	})
	if err != nil {
		return "", err
	}
	return db.Meta(ctx, generationKey)
}

const generationKey = "generation"

func newGeneration() string { return rand.Text() }

// SetMeta sets a value of the meta table.
func (db *DB) SetMeta(ctx context.Context, key, value string) error {
	return db.write(ctx, func(tx *sql.Tx) error { return setMeta(ctx, tx, key, value) })
}

func setMeta(ctx context.Context, tx *sql.Tx, key, value string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

// write runs fn in a write transaction, committing if it returns nil,
// and returns once the commit is durable (synchronous=FULL syncs the WAL
// at COMMIT): what searchd acknowledges (a batch of messages, edits and
// deletions, a forget, a checkpoint) survives a power cut.
func (db *DB) write(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.writeSync(ctx, "FULL", fn)
}

// writeBulk is write for what may be lost to a power cut because it is
// made again: an import's batches (each commits with its file's
// checkpoint, so a rerun resumes after the last one on disk), vectors and
// caches (recomputed). synchronous=NORMAL keeps the WAL unsynced until a
// checkpoint, which is what makes an import fast; the database stays
// consistent either way.
func (db *DB) writeBulk(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.writeSync(ctx, "NORMAL", fn)
}

// beforeCommit, when set (tests), sees each write transaction before it
// commits.
var beforeCommit func(*sql.Tx)

func (db *DB) writeSync(ctx context.Context, level string, fn func(*sql.Tx) error) error {
	return db.writeCarrying(ctx, level, false, func(tx *sql.Tx, _ *carried) (*carried, error) { return nil, fn(tx) })
}

// writeAside is writeSync for a write that changes nothing an applier
// carries to the next batch (messages, their segments, their authors'
// names and mentions): vectors, summaries, leases, backfill checkpoints,
// the text change log.
// A live server's embedding job writes between two message batches;
// this keeps the second from reading its channel's window again.
func (db *DB) writeAside(ctx context.Context, level string, fn func(*sql.Tx) error) error {
	return db.writeCarrying(ctx, level, false, func(tx *sql.Tx, c *carried) (*carried, error) { return c, fn(tx) })
}

// writeCarrying runs fn in a write transaction on the writer connection
// at the given synchronous level, committing if it returns nil. fn gets
// what the previous write left to carry (nil: nothing, or another
// connection has written since) and returns what this one leaves, kept
// only if it commits; carries says it may leave something.
func (db *DB) writeCarrying(ctx context.Context, level string, carries bool, fn func(*sql.Tx, *carried) (*carried, error)) error {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	c := db.carry
	db.carry = nil // until this write commits
	conn, err := db.writerConn(ctx)
	if err != nil {
		return err
	}
	// The level is the connection's, read at COMMIT.
	if level != db.writerLevel {
		if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = "+level); err != nil {
			db.dropWriter()
			return err
		}
		db.writerLevel = level
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		db.dropWriter()
		return err
	}
	// data_version moves when another connection, of this process or
	// another, commits, and not for this one's commits. Read under the
	// write lock (BEGIN IMMEDIATE), it is also what the next write reads
	// if nobody else commits in between.
	var version int64
	if c != nil || carries {
		if err := db.queryTx(ctx, tx, `PRAGMA data_version`).Scan(&version); err != nil {
			tx.Rollback()
			db.dropWriter()
			return err
		}
		if c != nil && version != c.version {
			c = nil
		}
	}
	next, err := fn(tx, c)
	if err != nil {
		tx.Rollback()
		return err
	}
	if beforeCommit != nil {
		beforeCommit(tx)
	}
	if err := tx.Commit(); err != nil {
		db.dropWriter()
		return err
	}
	if next != nil {
		next.version = version
	}
	db.carry = next
	return nil
}

// queryTx runs a one-row query in tx with the statement prepared once
// (prepared).
func (db *DB) queryTx(ctx context.Context, tx *sql.Tx, q string, args ...any) *sql.Row {
	st, err := db.prepared(ctx, q)
	if err != nil {
		return tx.QueryRowContext(ctx, q, args...) // and its error
	}
	return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}

// writerConn returns the writer connection, opening it if needed.
func (db *DB) writerConn(ctx context.Context) (*sql.Conn, error) {
	if db.writer != nil {
		return db.writer, nil
	}
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	db.writer, db.writerLevel = conn, ""
	return conn, nil
}

// dropWriter lets the writer connection go, with what was carried; the
// next write opens another.
func (db *DB) dropWriter() {
	if db.writer != nil {
		db.writer.Close()
		db.writer = nil
	}
	db.carry = nil
}

// QuickCheck runs PRAGMA quick_check and returns its findings ("ok" when
// the file is sound).
func (db *DB) QuickCheck(ctx context.Context) (string, error) {
	rows, err := db.db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", err
		}
		out = append(out, s)
	}
	return strings.Join(out, "; "), rows.Err()
}

// queryStrings returns a query's first column as strings.
func queryStrings(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// IsFull reports whether err is SQLite's "database or disk is full": the
// write did not happen, and will once there is room.
func IsFull(err error) bool {
	var se *moderncsqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlitelib.SQLITE_FULL
}
