// Package sqlitetest opens throwaway databases for tests.
package sqlitetest

import (
	"context"
	"path/filepath"
	"testing"

	"dsearch/searchd/sqlite"
)

// Open returns an empty, migrated database in a temporary directory,
// closed when the test ends.
func Open(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
