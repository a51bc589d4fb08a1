package search

import (
	"context"
	"fmt"
	"sync"

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
			return s.DB.SegmentsMatching(ctx, expr, f)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e.segs, e.err = s.DB.SegmentsMatching(ctx, expr, f)
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
