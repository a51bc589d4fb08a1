package search

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Cursor is what every cursor holds: the index version it was made at, a
// fingerprint of what it may be reused with, and an offset. Clients see
// cursors as opaque strings (base64 of JSON). A caller may embed Cursor in
// a larger struct to carry more: the question pipeline carries its plan.
type Cursor struct {
	Version     int64  `json:"v"`
	Fingerprint string `json:"f"`
	Offset      int    `json:"o"`
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
	case h.Version != version:
		return errors.New("new messages arrived since this cursor was made; start again without it")
	case h.Offset <= 0:
		return fmt.Errorf("cursor offset %d is out of range", h.Offset)
	}
	return nil
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
	return Fingerprint(r.Mode, r.Query, Sorted(r.Keywords), Sorted(f.Authors), Sorted(f.Channels), f.Since, f.Until, Sorted(r.Named))
}
