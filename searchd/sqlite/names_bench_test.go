package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// BenchmarkAuthorNames measures the names a question is matched against:
// every name (the operator's CLI), and only authors seen in the asker's
// channels (the bot), over 100,000 messages by 2,000 authors in 50
// channels, the asker reading 10 of them.
func BenchmarkAuthorNames(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "data"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const messages, authors, channels = 100_000, 2_000, 50
	var batch searchd.Batch
	for i := range messages {
		a := int64(i*7919%authors + 1)
		batch.Messages = append(batch.Messages, searchd.Message{ID: int64(i + 1), ChannelID: int64(1 + (i*31+int(a))%channels),
			CreatedAt: t0.Add(time.Duration(i) * time.Minute).UnixMicro(), Content: "words", Type: "Default",
			Author: searchd.Author{ID: a, Username: fmt.Sprint("user", a), Nickname: fmt.Sprint("nick", a)}})
		if len(batch.Messages) == 5000 {
			if _, err := db.Apply(ctx, &batch, segment.DefaultRules, nil); err != nil {
				b.Fatal(err)
			}
			batch.Messages = nil
		}
	}
	readable := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, bc := range []struct {
		name     string
		channels []int64
	}{{"all", nil}, {"readable", readable}} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				if _, err := db.AuthorNames(ctx, bc.channels); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
