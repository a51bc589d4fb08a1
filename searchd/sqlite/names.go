package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// namesCache keeps AuthorNames' answers while the database is unchanged:
// every search with a name boost asks for them (0.07 ms with a dozen
// authors, far more with thousands), and they change only when a write
// commits. PRAGMA data_version tells, on one connection, whether any
// other connection (of this process or another: an import beside
// serve) committed since it was last read; conn is a connection kept for
// that alone, which never writes, so no commit goes unseen.
type namesCache struct {
	mu      sync.Mutex
	conn    *sql.Conn
	version int64
	// byChannels maps a channel filter (namesKey) to its names.
	byChannels map[string]map[string][]int64
}

// maxCachedFilters bounds the channel filters whose names are kept (one
// per set of channels an asker reads).
const maxCachedFilters = 64

// AuthorNames maps every name an author was seen under (lower-cased) to
// their user IDs. With channels, only authors with a message in those
// channels (or their public threads, as a filter reads them) count: a
// name seen only where the asker cannot read must not be recognized.
// The map is the caller's to change.
func (db *DB) AuthorNames(ctx context.Context, channels []int64) (map[string][]int64, error) {
	c := &db.names
	c.mu.Lock()
	defer c.mu.Unlock()
	version, err := c.dataVersion(ctx, db)
	if err != nil {
		return nil, err
	}
	if version != c.version || c.byChannels == nil || len(c.byChannels) >= maxCachedFilters {
		c.version, c.byChannels = version, map[string]map[string][]int64{}
	}
	key := namesKey(channels)
	names, ok := c.byChannels[key]
	if !ok {
		// Read after the version: a commit in between moves the version
		// the next call reads, and these names are dropped then.
		if names, err = db.authorNames(ctx, channels); err != nil {
			return nil, err
		}
		c.byChannels[key] = names
	}
	out := make(map[string][]int64, len(names))
	for name, ids := range names {
		out[name] = slices.Clip(ids) // an append makes the caller's own copy
	}
	return out, nil
}

// dataVersion reads PRAGMA data_version on the cache's own connection;
// c.mu is held.
func (c *namesCache) dataVersion(ctx context.Context, db *DB) (int64, error) {
	if c.conn == nil {
		conn, err := db.db.Conn(ctx)
		if err != nil {
			return 0, err
		}
		c.conn, c.byChannels = conn, nil // another connection's versions are not comparable
	}
	var v int64
	if err := c.conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		c.close()
		return 0, err
	}
	return v, nil
}

// close lets the cache's connection go; c.mu is held.
func (c *namesCache) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn, c.byChannels = nil, nil
	}
}

// namesKey is a channel filter as the cache keys it: the same channels in
// any order are one filter.
func namesKey(channels []int64) string {
	ids := slices.Clone(channels)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteByte(',')
	}
	return b.String()
}

// authorNames is AuthorNames read from the database.
func (db *DB) authorNames(ctx context.Context, channels []int64) (map[string][]int64, error) {
	// UNION ALL: the pairs are made distinct below; a UNION's temporary
	// b-tree doubled the statement's cost.
	q := `SELECT user_id, LOWER(name) FROM user_names
		UNION ALL SELECT id, LOWER(display_name) FROM users WHERE display_name != ''`
	var args []any
	if len(channels) > 0 {
		// Each author is looked up in each channel (and public thread)
		// by the (channel, author) index until one message turns up. The
		// threads are listed first: where's subquery for them, inside
		// the EXISTS, took ten times as long.
		expanded, err := db.channelsWithThreads(ctx, channels)
		if err != nil {
			return nil, err
		}
		// A nickname counts only in its own server: the channels'.
		q = `WITH seen(id) AS MATERIALIZED (SELECT u.id FROM users u WHERE EXISTS (SELECT 1 FROM messages m
			WHERE m.author_id = u.id AND m.channel_id IN (` + marks(len(expanded)) + `))),
		servers(id) AS MATERIALIZED (SELECT DISTINCT COALESCE(guild_id, 0) FROM channels WHERE id IN (` + marks(len(expanded)) + `))
		SELECT user_id, LOWER(name) FROM user_names WHERE user_id IN seen AND (kind != 'nickname' OR guild_id IN servers)
		UNION ALL SELECT id, LOWER(display_name) FROM users WHERE display_name != '' AND id IN seen`
		for id := range expanded {
			args = append(args, id)
		}
		for id := range expanded {
			args = append(args, id)
		}
	}
	// Every search with a name boost asks: its few query texts (by the
	// filter's number of channels) are prepared once.
	rows, err := preparing{db}.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		if !slices.Contains(out[name], id) {
			out[name] = append(out[name], id)
		}
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out, rows.Err()
}
