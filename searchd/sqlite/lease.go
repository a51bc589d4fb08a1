package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"syscall"
	"time"
)

// A lease says which process does a piece of work on the database, so two
// never do it at once: `searchd embed` and the embedding job of a running
// `searchd serve` would otherwise embed the same segments twice. It is a
// row in meta, taken and renewed in a write transaction, and lapses when
// its holder stops renewing it (a crash) or its process is gone.
// (serve's lock file on the data directory says only that a serve runs,
// not whether it embeds, and a serve without a model embeds nothing.)
type Lease struct {
	Owner string    `json:"owner"` // who, for people: "searchd serve (pid 123)"
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Until time.Time `json:"until"`
}

// LeaseEmbedding names the embedding lease.
const LeaseEmbedding = "embedding"

// AcquireLease takes the named lease for owner (this process) until
// now+ttl, or renews it if owner holds it. If another holds it, it returns
// that lease and takes nothing.
func (db *DB) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (held *Lease, err error) {
	host := hostname()
	key := "lease:" + name
	err = db.writeAside(ctx, "FULL", func(tx *sql.Tx) error {
		var raw string
		switch err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&raw); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			var l Lease
			if json.Unmarshal([]byte(raw), &l) == nil && l.Owner != owner && l.live(db.now(), host) {
				held = &l
				return nil
			}
		}
		b, _ := json.Marshal(Lease{Owner: owner, PID: os.Getpid(), Host: host, Until: db.now().Add(ttl).UTC()})
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, string(b))
		return err
	})
	return held, err
}

// ReleaseLease gives the named lease up, if owner holds it.
func (db *DB) ReleaseLease(ctx context.Context, name, owner string) error {
	return db.writeAside(ctx, "FULL", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE key = ? AND json_extract(value, '$.owner') = ?`, "lease:"+name, owner)
		return err
	})
}

// live reports whether a lease still holds: not expired, and on this host
// its process still runs.
func (l *Lease) live(now time.Time, host string) bool {
	if !now.Before(l.Until) {
		return false
	}
	if l.Host == host && l.PID > 0 {
		if err := syscall.Kill(l.PID, 0); errors.Is(err, syscall.ESRCH) {
			return false
		}
	}
	return true
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
