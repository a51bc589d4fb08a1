package ingest

import (
	"context"
	"path/filepath"
	"testing"

	"dsearch/searchd/internal/sample"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// BenchmarkImport imports a 50,000-message synthetic export with the
// blog's gap distribution into a fresh database. `make bench` also times
// the full 650,000-message import with the real binary.
func BenchmarkImport(b *testing.B) {
	const n = 50000
	paths, err := sample.WriteSynthetic(filepath.Join(b.TempDir(), "export"),
		sample.Synthetic{Messages: n, Channels: 4, Users: 12, Seed: 1, ReplyRate: 0.08})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "data"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for _, r := range (&Importer{DB: db, Rules: segment.DefaultRules}).Import(ctx, paths) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		b.StopTimer()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "msgs/s")
}
