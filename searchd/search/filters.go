package search

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"dsearch/searchd/index"
	"dsearch/searchd/lexical"
	"dsearch/searchd/sqlite"
)

// maxCachedSegments bounds the segment IDs the filter cache holds in all
// (about 40 bytes each in a map: 10 MB at most).
const maxCachedSegments = 1 << 18

// filterCache remembers, for one index version, the segments a filter
// (and keyword expression) admits. Computing them joins every matching
// message with its segment: a third of a second for a channel of 80,000
// messages, and most of a filtered search's time. The same filters come
// again and again (a member's readable channels), and any change to the
// data moves the version, which empties the cache. Concurrent searches
// with the same filter compute it once.
type filterCache struct {
	mu      sync.Mutex
	version int64
	size    int
	entries map[string]*filterEntry
}

type filterEntry struct {
	done chan struct{} // closed when segs and err are set
	segs map[int64]bool
	err  error
}

// segmentsMatching is DB.SegmentsMatching through the cache. The map it
// returns is shared: callers must not change it.
func (s *Service) segmentsMatching(ctx context.Context, version int64, expr string, f sqlite.Filter) (map[int64]bool, error) {
	return s.cachedSegments(ctx, version, expr, f, func() (map[int64]bool, error) {
		return s.DB.SegmentsMatching(ctx, expr, f)
	})
}

// keywordSegments are the segments holding a message that passes f and
// holds one of the keyword alternatives (keywordAlternatives), through
// the cache. The map is shared.
func (s *Service) keywordSegments(ctx context.Context, version int64, alts [][]lexical.Term, f sqlite.Filter) (map[int64]bool, error) {
	expr := alternativesExpr(alts)
	return s.cachedSegments(ctx, version, expr, f, func() (map[int64]bool, error) {
		return s.findKeywordSegments(ctx, alts, f)
	})
}

// findKeywordSegments lists the messages holding the alternatives as
// keyword search does (the in-memory index when it is loaded and can
// answer, else FTS5) and reads their segments from the memberships when
// they are loaded, else from SQLite. SQLite looks up each message's
// segment at about 5 µs: 40 ms for a common word at 650,000 messages,
// seconds at 6.5 M; the memberships are a walk of two sorted lists.
func (s *Service) findKeywordSegments(ctx context.Context, alts [][]lexical.Term, f sqlite.Filter) (map[int64]bool, error) {
	if s.Keywords == nil || !lexical.Supports(lexical.Query{Required: alts}) {
		return s.DB.SegmentsMatching(ctx, alternativesExpr(alts), f)
	}
	idx, err := s.Keywords.Current(ctx)
	if err != nil {
		return nil, err
	}
	if idx == nil { // loading
		return s.DB.SegmentsMatching(ctx, alternativesExpr(alts), f)
	}
	// The memberships after the keyword index: they are at least as
	// recent, so every message it lists has its segment there (a message
	// and its membership are stored in one transaction).
	var members *index.MembershipReader
	if s.Memberships != nil {
		if members, err = s.Memberships.Current(ctx); err != nil {
			return nil, err
		}
	}
	wf, err := s.DB.WithThreads(ctx, f)
	if err != nil {
		return nil, err
	}
	ids := idx.Holding(alts, lexical.Filter{Channels: wf.Channels, Authors: wf.Authors, Since: wf.Since, Until: wf.Until}, nil)
	if members == nil { // (re)loading
		return s.DB.SegmentsOfMessages(ctx, ids, sqlite.Filter{})
	}
	slices.Sort(ids) // mostly sorted already: the index holds messages as stored
	ids = slices.Compact(ids)
	segs := make(map[int64]bool, len(ids))
	members.Segments(ids, segs)
	return segs, nil
}

// cachedSegments returns the cache's segments for expr and f at version,
// computing them with compute when it has none.
func (s *Service) cachedSegments(ctx context.Context, version int64, expr string, f sqlite.Filter, compute func() (map[int64]bool, error)) (map[int64]bool, error) {
	if expr == "" && f.Empty() {
		return nil, nil
	}
	c := &s.filters
	key := fmt.Sprintf("%q %v %v %d %d", expr, f.Authors, f.Channels, f.Since, f.Until)
	c.mu.Lock()
	if c.version != version || c.entries == nil {
		c.version, c.size, c.entries = version, 0, map[string]*filterEntry{}
	}
	e, ok := c.entries[key]
	if !ok {
		e = &filterEntry{done: make(chan struct{})}
		c.entries[key] = e
	}
	c.mu.Unlock()
	if ok {
		select {
		case <-e.done:
			if e.err == nil {
				return e.segs, nil
			}
			// The one who computed it failed (canceled, say): try ourselves.
			return compute()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e.segs, e.err = compute()
	close(e.done)
	c.mu.Lock()
	if e.err != nil || c.size+len(e.segs) > maxCachedSegments {
		if c.entries[key] == e {
			delete(c.entries, key)
		}
	} else if c.entries[key] == e {
		c.size += len(e.segs)
	}
	c.mu.Unlock()
	return e.segs, e.err
}
