package sqlite

import (
	"context"
	"slices"
)

// Stats summarizes the database.
type Stats struct {
	Guilds, Channels, Users, Messages, Segments int64
	// OverlappingSegments counts segments that overlap an earlier one of
	// their channel in time: late replies pull messages into old segments.
	OverlappingSegments int64
	FirstAt, LastAt     int64 // µs; 0 when empty
	// Gaps are the sorted gaps between consecutive messages of a channel,
	// in µs; Sizes the sorted message counts of segments.
	Gaps, Sizes []int64
}

// Quantiles the stats report, as the blog's table.
var Quantiles = []float64{0.50, 0.75, 0.90, 0.95, 0.99}

// Quantile returns the q-th quantile (nearest rank) of sorted values.
func Quantile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Stats computes counts and distributions. It scans every message, which
// takes about a second for 650,000.
func (db *DB) Stats(ctx context.Context) (*Stats, error) {
	var s Stats
	// Guilds and channels as a user counts them: not Direct Messages (the
	// exporter's guild 0), not categories, not a placeholder for a
	// channel that nothing was ever read from.
	err := db.db.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM guilds WHERE id != 0),
		(SELECT COUNT(*) FROM channels c WHERE c.id != 0
			AND (c.kind NOT IN ('', 'GuildCategory') OR EXISTS (SELECT 1 FROM messages m WHERE m.channel_id = c.id))),
		(SELECT COUNT(*) FROM users),
		(SELECT COUNT(*) FROM messages), (SELECT COUNT(*) FROM segments),
		COALESCE((SELECT MIN(created_at) FROM messages), 0), COALESCE((SELECT MAX(created_at) FROM messages), 0)`).
		Scan(&s.Guilds, &s.Channels, &s.Users, &s.Messages, &s.Segments, &s.FirstAt, &s.LastAt)
	if err != nil {
		return nil, err
	}
	s.Gaps = make([]int64, 0, s.Messages)
	rows, err := db.db.QueryContext(ctx, `SELECT channel_id, created_at FROM messages ORDER BY channel_id, created_at, id`)
	if err != nil {
		return nil, err
	}
	var prevChan, prevAt int64
	first := true
	for rows.Next() {
		var ch, at int64
		if err := rows.Scan(&ch, &at); err != nil {
			rows.Close()
			return nil, err
		}
		if !first && ch == prevChan {
			s.Gaps = append(s.Gaps, at-prevAt)
		}
		prevChan, prevAt, first = ch, at, false
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(s.Gaps)

	rows, err = db.db.QueryContext(ctx, `SELECT channel_id, start_at, end_at, message_count FROM segments ORDER BY channel_id, start_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var maxEnd int64
	first = true
	for rows.Next() {
		var ch, start, end, n int64
		if err := rows.Scan(&ch, &start, &end, &n); err != nil {
			return nil, err
		}
		if first || ch != prevChan {
			maxEnd = end
		} else {
			if start < maxEnd {
				s.OverlappingSegments++
			}
			maxEnd = max(maxEnd, end)
		}
		prevChan, first = ch, false
		s.Sizes = append(s.Sizes, n)
	}
	slices.Sort(s.Sizes)
	return &s, rows.Err()
}
