package search

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"dsearch/searchd/sqlite"
)

// Cursor is what every cursor holds: the version it was made at, a
// fingerprint of what it may be reused with, an offset, and the segments
// already shown. Clients see cursors as opaque strings (base64 of JSON). A
// caller may embed Cursor in a larger struct to carry more: the question
// pipeline carries its plan.
//
// The version counts changes to messages (new, edited, deleted) where
// the search looked (CursorVersion), which a reader would notice; it does
// not move when the embedding job
// writes vectors, which on a new server runs for hours. New vectors can
// still move results up or down, so a page skips the segments shown
// before instead of trusting positions: nothing is shown twice, nothing
// that was there is skipped.
type Cursor struct {
	Version     int64   `json:"v"`
	Fingerprint string  `json:"f"`
	Offset      int     `json:"o"`
	Shown       []int64 `json:"shown,omitempty"` // the pages before's results (ShownAs), up to MaxShown
}

// MaxShown caps the segments a cursor lists (ten full pages); later pages
// follow the offset alone.
const MaxShown = 10 * MaxLimit

// CursorVersion is the version a cursor for a search or question is made
// at and checked against (sqlite.DB.CursorVersion): it moves with the
// changes in the channels searched and those the audience may read, whose
// words weigh the ranking; with no channel filter, with any change.
func (s *Service) CursorVersion(ctx context.Context, f sqlite.Filter, readable []int64) (int64, error) {
	if len(f.Channels) == 0 {
		return s.DB.CursorVersion(ctx, nil)
	}
	return s.DB.CursorVersion(ctx, append(slices.Clone(f.Channels), readable...))
}

// Head returns the common part of a cursor (and of any struct embedding it).
func (c *Cursor) Head() *Cursor { return c }

// EncodeCursor makes c, a Cursor or a struct embedding one, a string.
func EncodeCursor(c any) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads s into c and refuses it unless it was made at
// version, for the same fingerprint, with an offset past the first page.
func DecodeCursor(s string, c interface{ Head() *Cursor }, version int64, fingerprint string) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, c) != nil || c.Head().Fingerprint == "" {
		return errors.New("invalid cursor")
	}
	switch h := c.Head(); {
	case h.Fingerprint != fingerprint:
		return errors.New("cursor belongs to a different query or filter; start again without it")
	case h.Offset <= 0 || len(h.Shown) > min(h.Offset, MaxShown):
		return fmt.Errorf("cursor offset %d is out of range", h.Offset)
	case h.Version < version:
		// No count: the refusal says no more than it must.
		return errors.New("messages were added, edited or deleted since this cursor was made; start again without it")
	case h.Version != version:
		return errors.New("the database was replaced since this cursor was made; start again without it")
	}
	return nil
}

// ShownAs is how a page remembers a result it showed: by its segment, or
// by its message where results are messages (keyword mode: several may
// share a segment, and a segment's other hits must not be skipped).
type ShownAs func(Result) int64

var (
	BySegment ShownAs = func(r Result) int64 { return r.SegmentID }
	ByMessage ShownAs = func(r Result) int64 { return r.MessageID }
)

// Page returns the page of ranked that follows what c has shown, and
// advances c past it; more reports whether results remain after it. With
// a zero Cursor it is the first page.
func (c *Cursor) Page(ranked []Result, limit int, as ShownAs) (page []Result, more bool, err error) {
	shown := make(map[int64]bool, len(c.Shown))
	for _, id := range c.Shown {
		shown[id] = true
	}
	rest := make([]Result, 0, len(ranked))
	for _, r := range ranked {
		if !shown[as(r)] {
			rest = append(rest, r)
		}
	}
	skip := c.Offset - len(c.Shown) // shown past MaxShown: by position
	if c.Offset > 0 && skip >= len(rest) {
		return nil, false, fmt.Errorf("cursor offset %d is past the last of %d results", c.Offset, len(ranked))
	}
	page = rest[skip:min(skip+limit, len(rest))]
	for _, r := range page {
		if len(c.Shown) < MaxShown {
			c.Shown = append(c.Shown, as(r))
		}
	}
	c.Offset += len(page)
	return page, skip+len(page) < len(rest), nil
}

// Fingerprint identifies what a cursor may be reused with: a hash of the
// parts, which callers give in a fixed order, lists sorted (see Sorted).
func Fingerprint(parts ...any) string {
	b, _ := json.Marshal(parts)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}

// Sorted returns a sorted copy, so a list's order does not change a
// fingerprint.
func Sorted[T cmp.Ordered](xs []T) []T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// fingerprint identifies what a search cursor may be reused with.
func fingerprint(r *Request) string {
	f := r.Filter
	return Fingerprint(r.Mode, r.Query, Sorted(r.Keywords), Sorted(f.Authors), Sorted(f.Channels), f.Since, f.Until, Sorted(r.Named), Sorted(r.Readable))
}
