package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// BenchmarkPlaceLive applies one live message at a time, as the bot sends
// a message event, to a busy channel (twelve people, a line every 4
// seconds) holding 20,000 messages: each op is a transaction that stores,
// indexes and places the message, without the commit's fsync. It reports
// the percentiles of the placement alone, as a fresh transaction makes it
// (preparing its statements, reading the channel's latest 50 lines and
// scoring them).
func BenchmarkPlaceLive(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "data"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	topics := []string{"the boiler broke again", "anyone up for games tonight?", "which keyboard did you buy", "보일러 또 고장났어",
		"the trip was amazing", "did you see the match?", "moving house next month", "이번 주말에 뭐 해?"}
	next := int64(1)
	message := func() searchd.Message {
		m := searchd.Message{ID: next, ChannelID: 10, CreatedAt: at.Add(time.Duration(next) * 4 * time.Second).UnixMicro(), Type: "Default",
			Author:  searchd.Author{ID: 100 + next%12, Username: fmt.Sprint("user", next%12)},
			Content: fmt.Sprintf("%s (%d)", topics[next%int64(len(topics))], next)}
		if next%5 == 0 {
			m.Mentions = []int64{100 + (next+3)%12}
		}
		next++
		return m
	}
	for range 4 {
		var seed searchd.Batch
		for range 5000 {
			seed.Messages = append(seed.Messages, message())
		}
		if _, err := db.Apply(ctx, &seed, segment.DefaultRules, nil); err != nil {
			b.Fatal(err)
		}
	}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		bt := &searchd.Batch{Messages: []searchd.Message{message()}}
		err := db.writeBulk(ctx, func(tx *sql.Tx) error {
			a, err := newApplier(ctx, tx, segment.DefaultRules, db.now().UnixMicro())
			if err != nil {
				return err
			}
			defer a.close()
			if _, err = a.apply(bt); err != nil {
				return err
			}
			// Time the placement alone, as a fresh transaction makes it.
			start := time.Now()
			p, err := newApplier(ctx, tx, segment.DefaultRules, db.now().UnixMicro())
			if err != nil {
				return err
			}
			defer p.close()
			_, _, _, err = p.decide(&bt.Messages[0])
			took = append(took, time.Since(start))
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}
