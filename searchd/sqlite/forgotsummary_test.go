package sqlite

import (
	"context"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/segment"
)

// A catch-up summary (the catch-up cache) of a conversation leaves with
// the conversation, however it is forgotten: its channel deleted on
// Discord, its server left, its author forgotten or opted out, its
// messages forgotten by age (the conversation itself staying, with the
// other author's or the later message). It held their text.
func TestCachedSummaryLeavesWithEveryForget(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		forget func(db *DB) error
	}{
		{"deleted channel", func(db *DB) error {
			_, err := db.ForgetDeletedChannels(ctx, []int64{100}, segment.DefaultRules)
			return err
		}},
		{"left server", func(db *DB) error { _, err := db.ForgetLeftGuild(ctx, 7, segment.DefaultRules); return err }},
		{"forgotten author", func(db *DB) error {
			_, err := db.Forget(ctx, ForgetFilter{Author: 1}, segment.DefaultRules)
			return err
		}},
		{"opted out", func(db *DB) error { _, err := db.OptOut(ctx, 1, segment.DefaultRules); return err }},
		{"forgotten by age", func(db *DB) error {
			_, err := db.Forget(ctx, ForgetFilter{Before: t0.Add(30 * time.Second).UnixMicro()}, segment.DefaultRules)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t)
			a, b := msg(10, 0, 0), msg(11, time.Minute, 0)
			a.Content, b.Content = "the secret plan", "keep it quiet"
			b.Author = searchd.Author{ID: 2, Username: "b"} // stays, with the conversation, after an author's or an age's forget
			batch := &searchd.Batch{Guilds: []searchd.Guild{{ID: 7, Name: "g"}}, Channels: []searchd.Channel{{ID: 100, GuildID: 7, Name: "c", Kind: "GuildText"}},
				Messages: []searchd.Message{a, b}}
			if _, err := db.Apply(ctx, batch, segment.DefaultRules, nil); err != nil {
				t.Fatal(err)
			}
			ids, err := db.SegmentIDs(ctx, 100)
			if err != nil || len(ids) != 1 {
				t.Fatalf("segments: %v, %v", ids, err)
			}
			seg, _, err := db.Segment(ctx, ids[0], 10)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SaveSummary(ctx, seg.ID, seg.Revision, "m", Summary{Text: "a secret plan", Keywords: []string{"secret"}}); err != nil {
				t.Fatal(err)
			}
			if err := tc.forget(db); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM segment_summaries`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%d cached summary of the forgotten conversation stays", n)
			}
		})
	}
}
