package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"sort"
	"testing"

	"dsearch/migrations"
)

// openAt makes a database with the migrations before upTo applied, runs
// setup's statements on it, and opens it as searchd does, applying the
// rest.
func openAt(t *testing.T, upTo string, setup ...string) *DB {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	fresh, err := Open(ctx, dir) // the data directory, as searchd makes it
	if err != nil {
		t.Fatal(err)
	}
	path := fresh.Path() + ".old"
	fresh.Close()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	names, _ := fs.Glob(migrations.FS, "*.sql")
	sort.Strings(names)
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n >= upTo {
			break
		}
		b, _ := fs.ReadFile(migrations.FS, n)
		if _, err := raw.Exec(string(b)); err != nil {
			t.Fatal(n, err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (?, 1)`, n); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range setup {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	raw.Close()
	db, err := openFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Migration 0018 keeps a nickname where it is the name its member was
// last shown under, in the one server they wrote in; a nickname dropped
// since, or one of a member of several servers (whose server is not
// known), is not shown.
func TestNicknamesMigratedAsShown(t *testing.T) {
	db := openAt(t, "0018",
		`INSERT INTO guilds (id) VALUES (1), (2)`,
		`INSERT INTO channels (id, guild_id) VALUES (10, 1), (20, 2)`,
		// bob went by "Bobby", then by his global name.
		`INSERT INTO users (id, name, display_name, display_at) VALUES (5, 'bob', 'Bob Global', 2000)`,
		`INSERT INTO user_names VALUES (5, 'username', 'bob', 1000, 2000), (5, 'global', 'Bob Global', 1000, 2000), (5, 'nickname', 'Bobby', 1000, 1000)`,
		// carol goes by "Caz" in server 1.
		`INSERT INTO users (id, name, display_name, display_at) VALUES (6, 'carol', 'Caz', 2000)`,
		`INSERT INTO user_names VALUES (6, 'username', 'carol', 1000, 2000), (6, 'global', 'Carol', 1000, 2000), (6, 'nickname', 'Caz', 1000, 2000)`,
		// dan writes in both servers; his nickname's server is unknown.
		`INSERT INTO users (id, name, display_name, display_at) VALUES (7, 'dan', 'Secret Dan', 2000)`,
		`INSERT INTO user_names VALUES (7, 'username', 'dan', 1000, 2000), (7, 'nickname', 'Secret Dan', 1000, 2000)`,
		`INSERT INTO messages (id, channel_id, author_id, created_at, content) VALUES
			(100, 10, 5, 1000, 'a'), (101, 10, 5, 2000, 'b'), (102, 10, 6, 2000, 'c'), (103, 10, 7, 2000, 'd'), (104, 20, 7, 2000, 'e')`,
	)
	ctx := context.Background()
	for id, want := range map[int64]string{100: "Bob Global", 101: "Bob Global", 102: "Caz", 103: "dan", 104: "dan"} {
		m, err := db.Message(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if m.AuthorName != want {
			t.Errorf("message %d by %q after the migration, want %q", id, m.AuthorName, want)
		}
	}
}
