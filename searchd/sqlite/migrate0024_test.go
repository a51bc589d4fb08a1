package sqlite

import (
	"context"
	"testing"
)

// Migration 0024 drops the catch-up lines an older searchd cached: they
// were checked by fewer rules than a line is now, and would be served
// unchecked.
// So does 0026, for the dates, figures and names a line is checked for
// since.
func TestCachedCatchupLinesDroppedAtUpgrade(t *testing.T) {
	for _, upTo := range []string{"0024", "0026"} {
		db := openAt(t, upTo,
			`INSERT INTO segment_summaries (segment_id, revision, model, summary, keywords) VALUES (1, 1, 'm', 'Sora fixed the boiler for $450 on August 30', '[]')`)
		var n int
		if err := db.db.QueryRowContext(context.Background(), `SELECT count(*) FROM segment_summaries`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("migrations from %s: %d catch-up lines of an older searchd still cached", upTo, n)
		}
	}
}
