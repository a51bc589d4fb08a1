package sqlite

import (
	"context"
	"testing"
)

// Migration 0024 drops the catch-up lines an older searchd cached: they
// were checked by fewer rules than a line is now, and would be served
// unchecked.
func TestCachedCatchupLinesDroppedAtUpgrade(t *testing.T) {
	db := openAt(t, "0024",
		`INSERT INTO segment_summaries (segment_id, revision, model, summary, keywords) VALUES (1, 1, 'm', 'Sora fixed the boiler in 2019', '[]')`)
	var n int
	if err := db.db.QueryRowContext(context.Background(), `SELECT count(*) FROM segment_summaries`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d catch-up lines of an older searchd still cached", n)
	}
}
