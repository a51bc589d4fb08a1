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

// maxCachedBytes bounds what the filter cache holds in all: 160 answers
// of every segment at 6.5 M messages (segmentSet).
const maxCachedBytes = 16 << 20

// filterCache remembers, for one version (the index's, or for a filter by
// channels alone the segments' epoch), the segments a filter
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
	segs *segmentSet
	err  error
}

// segmentsMatching are the segments holding a message that f admits,
// through the cache; nil admits all.
//
// A filter by channels alone is SQLite's: a segment lies in one channel,
// so the segments table answers in milliseconds. An author or a time
// needs each admitted message's segment, which SQLite finds at about 5
// µs a message: seconds for an author's 540,000 messages at 6.5 M, on
// every search once a live message moves the version or when the
// answer is too large to keep. From memory it is a walk of the keyword
// index's messages and the memberships. Either way a message counts when
// it was said (spoken: Discord's notices are not an author's words), as
// in keyword search; SQLite counts notices too, only while memory loads.
func (s *Service) segmentsMatching(ctx context.Context, version int64, f sqlite.Filter) (*segmentSet, error) {
	if len(f.Authors) == 0 && f.Since == 0 && f.Until == 0 && len(f.Channels) > 0 {
		// Channels alone: kept while no segment comes or goes (the bot
		// asks every search with its member's readable channels, and a
		// new message moves the index version, seldom the segments).
		epoch, err := s.DB.SegmentsEpoch(ctx)
		if err != nil {
			return nil, err
		}
		return s.channelFilters.segments(ctx, epoch, "", f, func() (*segmentSet, error) {
			return s.channels.of(ctx, s.DB, f)
		})
	}
	return s.filters.segments(ctx, version, "", f, func() (*segmentSet, error) {
		if len(f.Authors) > 0 || f.Since != 0 || f.Until != 0 {
			idx, members, lf, err := s.inMemory(ctx, f)
			if err != nil {
				return nil, err
			}
			if idx != nil && members != nil {
				return segmentsOf(members, idx.Admitted(lf, nil)), nil
			}
		}
		return s.sqlSegments(ctx, "", f)
	})
}

// channelSegments keeps each channel's segments and reads a channel's
// again only once its messages changed (sqlite.DB.ChannelVersions):
// the segments' epoch moves with any new conversation anywhere, and
// reading a filter of most channels anew at 6.5 M messages (750,000
// segment IDs) took a third of a second, paid by the next search after
// any conversation began.
type channelSegments struct {
	mu  sync.Mutex
	ids map[int64]versioned
}

type versioned struct {
	version int64
	ids     []int64
}

// of is the segments of f's channels and their public threads.
func (c *channelSegments) of(ctx context.Context, db *sqlite.DB, f sqlite.Filter) (*segmentSet, error) {
	wf, err := db.WithThreads(ctx, f)
	if err != nil {
		return nil, err
	}
	versions, err := db.ChannelVersions(ctx, wf.Channels)
	if err != nil {
		return nil, err
	}
	lists := make([][]int64, 0, len(wf.Channels))
	for _, ch := range wf.Channels {
		c.mu.Lock()
		got, ok := c.ids[ch]
		c.mu.Unlock()
		if !ok || got.version != versions[ch] {
			ids, err := db.SegmentsOfChannel(ctx, ch)
			if err != nil {
				return nil, err
			}
			got = versioned{versions[ch], ids}
			c.mu.Lock()
			if c.ids == nil {
				c.ids = map[int64]versioned{}
			}
			c.ids[ch] = got
			c.mu.Unlock()
		}
		lists = append(lists, got.ids)
	}
	return segmentSetOfLists(lists), nil
}

// keywordSegments are the segments holding a message that passes f and
// holds one of the keyword alternatives (keywordAlternatives), through
// the cache.
func (s *Service) keywordSegments(ctx context.Context, version int64, alts [][]lexical.Term, f sqlite.Filter) (*segmentSet, error) {
	expr := alternativesExpr(alts)
	return s.filters.segments(ctx, version, expr, f, func() (*segmentSet, error) {
		return s.findKeywordSegments(ctx, alts, f)
	})
}

// findKeywordSegments lists the messages holding the alternatives as
// keyword search does (the in-memory index when it is loaded and can
// answer, else FTS5) and reads their segments from the memberships when
// they are loaded, else from SQLite. SQLite looks up each message's
// segment at about 5 µs: 40 ms for a common word at 650,000 messages,
// seconds at 6.5 M; the memberships are a walk of two sorted lists.
func (s *Service) findKeywordSegments(ctx context.Context, alts [][]lexical.Term, f sqlite.Filter) (*segmentSet, error) {
	if !lexical.Supports(lexical.Query{Required: alts}) {
		return s.sqlSegments(ctx, alternativesExpr(alts), f)
	}
	idx, members, lf, err := s.inMemory(ctx, f)
	switch {
	case err != nil:
		return nil, err
	case idx == nil: // loading
		return s.sqlSegments(ctx, alternativesExpr(alts), f)
	case members == nil: // (re)loading
		segs, err := s.DB.SegmentsOfMessages(ctx, idx.Holding(alts, lf, nil), sqlite.Filter{})
		if err != nil {
			return nil, err
		}
		return newSegmentSet(segs), nil
	}
	return segmentsOf(members, idx.Holding(alts, lf, nil)), nil
}

// sqlSegments are SQLite's segments for expr and f; nil admits all.
func (s *Service) sqlSegments(ctx context.Context, expr string, f sqlite.Filter) (*segmentSet, error) {
	if expr == "" && f.Empty() {
		return nil, nil
	}
	ids, err := s.DB.SegmentsMatching(ctx, expr, f)
	if err != nil {
		return nil, err
	}
	return segmentSetOf(ids), nil
}

// inMemory returns the keyword index and the memberships, each nil while
// it loads, and f as the index filters: its channels with their public
// threads, as SQLite's filter reads them.
func (s *Service) inMemory(ctx context.Context, f sqlite.Filter) (*lexical.Index, *index.MembershipReader, lexical.Filter, error) {
	if s.Keywords == nil {
		return nil, nil, lexical.Filter{}, nil
	}
	idx, err := s.Keywords.Current(ctx)
	if err != nil || idx == nil {
		return nil, nil, lexical.Filter{}, err
	}
	// The memberships after the keyword index: they are at least as
	// recent, so every message it lists has its segment there (a message
	// and its membership are stored in one transaction).
	var members *index.MembershipReader
	if s.Memberships != nil {
		if members, err = s.Memberships.Current(ctx); err != nil {
			return nil, nil, lexical.Filter{}, err
		}
	}
	wf, err := s.DB.WithThreads(ctx, f)
	if err != nil {
		return nil, nil, lexical.Filter{}, err
	}
	return idx, members, lexical.Filter{Channels: wf.Channels, Authors: wf.Authors, Since: wf.Since, Until: wf.Until}, nil
}

// segmentsOf maps messages to their segments through the memberships.
func segmentsOf(members *index.MembershipReader, ids []int64) *segmentSet {
	slices.Sort(ids) // mostly sorted already: the index holds messages as stored
	ids = slices.Compact(ids)
	segs := make(map[int64]bool, len(ids))
	members.Segments(ids, segs)
	return newSegmentSet(segs)
}

// segments returns the cache's segments for expr and f at version,
// computing them with compute when it has none.
func (c *filterCache) segments(ctx context.Context, version int64, expr string, f sqlite.Filter, compute func() (*segmentSet, error)) (*segmentSet, error) {
	if expr == "" && f.Empty() {
		return nil, nil
	}
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
	if e.err != nil || c.size+e.segs.bytes() > maxCachedBytes {
		if c.entries[key] == e {
			delete(c.entries, key)
		}
	} else if c.entries[key] == e {
		c.size += e.segs.bytes()
	}
	c.mu.Unlock()
	return e.segs, e.err
}
