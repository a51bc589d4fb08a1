package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// BenchmarkPlaceLive applies one live message at a time, as the server
// applies the bot's message event (db.Apply, durable), to a busy channel
// (twelve people, a line every 4 seconds) holding 20,000 messages, with
// the embedding job's write between two messages as a live server has
// it. ns/op is the whole Apply with its commit's fsync; place-p50/p99 time
// placing the message inside that Apply (deciding its segment: reading
// the window or taking the one carried from the previous batch, scoring
// the candidates, storing the membership); apply-p50/p99 the whole Apply.
// cold: a write that is not aside comes between two messages instead, so
// each reads its window again (as after another process's write).
func BenchmarkPlaceLive(b *testing.B) {
	b.Run("carried", func(b *testing.B) { benchmarkPlaceLive(b, false) })
	b.Run("cold", func(b *testing.B) { benchmarkPlaceLive(b, true) })
}

func benchmarkPlaceLive(b *testing.B, cold bool) {
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
	placing := make([]time.Duration, 0, b.N)
	placeTimer = func(d time.Duration) { placing = append(placing, d) }
	defer func() { placeTimer = nil }()
	applying := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := db.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{message()}}, segment.DefaultRules, nil); err != nil {
			b.Fatal(err)
		}
		applying = append(applying, time.Since(start))
		b.StopTimer()
		if err := db.SaveSummary(ctx, 1, revisionOf(b, db, 1), "bench", Summary{}); err != nil { // the embedding job's kind of write
			b.Fatal(err)
		}
		if cold {
			if err := db.SetMeta(ctx, "bench", "cold"); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	b.StopTimer()
	percentile := func(ds []time.Duration, p int) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)*p/100].Microseconds()) / 1000
	}
	b.ReportMetric(percentile(placing, 50), "place-p50-ms")
	b.ReportMetric(percentile(placing, 99), "place-p99-ms")
	b.ReportMetric(percentile(applying, 50), "apply-p50-ms")
	b.ReportMetric(percentile(applying, 99), "apply-p99-ms")
}
