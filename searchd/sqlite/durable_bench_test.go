package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// BenchmarkLiveBatch applies what the bot sends: batches of 100 new
// messages (its largest flush) over a database that already holds 20,000,
// durable (synchronous=FULL, as POST /v1/messages commits) and not
// (NORMAL, as imports commit), to measure what acknowledging only durable
// batches costs the live sync.
func BenchmarkLiveBatch(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run(sync, func(b *testing.B) {
			ctx := context.Background()
			db, err := Open(ctx, filepath.Join(b.TempDir(), "data"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			next := int64(1)
			batch := func(n int) *searchd.Batch {
				var out searchd.Batch
				for range n {
					out.Messages = append(out.Messages, searchd.Message{ID: next, ChannelID: 10 + next%7,
						CreatedAt: at.Add(time.Duration(next) * 20 * time.Second).UnixMicro(), Type: "Default",
						Author:  searchd.Author{ID: 100 + next%9, Username: fmt.Sprint("user", next%9)},
						Content: fmt.Sprintf("message %d of a live channel, with a few words to index and search", next)})
					next++
				}
				return &out
			}
			for range 4 {
				if _, err := db.Apply(ctx, batch(5000), segment.DefaultRules, &Checkpoint{Path: "seed"}); err != nil {
					b.Fatal(err)
				}
			}
			write := db.write
			if sync == "NORMAL" {
				write = db.writeBulk
			}
			b.ResetTimer()
			for range b.N {
				bt := batch(100)
				err := write(ctx, func(tx *sql.Tx) error {
					a, err := newApplier(ctx, db, tx, segment.DefaultRules, db.now().UnixMicro())
					if err != nil {
						return err
					}
					defer a.close()
					res, err := a.apply(bt)
					if err != nil {
						return err
					}
					return a.logChanges(res.Changed())
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(100*b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
