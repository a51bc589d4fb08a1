package answer

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"dsearch/searchd/search"
	"dsearch/searchd/sqlite"
)

// A queryCursor carries an answer's plan to its next page, so paging
// never asks the LLM again. Like search cursors it is opaque to clients
// and dies when new data arrives or the question or filters change.
type queryCursor struct {
	Version     int64   `json:"v"`
	Fingerprint string  `json:"f"`
	Offset      int     `json:"o"`
	Plan        Plan    `json:"p"`
	Source      string  `json:"s"`
	Authors     []int64 `json:"a,omitempty"`
}

func encodeCursor(c queryCursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, version int64, fp string) (*queryCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c queryCursor
	// A client can forge a cursor: its plan is checked like the LLM's.
	if err != nil || json.Unmarshal(b, &c) != nil || c.Fingerprint == "" || c.Plan.validate(nil) != nil {
		return nil, inputErr("invalid cursor")
	}
	switch {
	case c.Fingerprint != fp:
		return nil, inputErr("cursor belongs to a different question or filter; ask again without it")
	case c.Version != version:
		return nil, inputErr("new messages arrived since this answer; ask again")
	case c.Offset <= 0 || len(c.Authors) > search.MaxFilterIDs:
		return nil, inputErr(fmt.Sprintf("cursor offset %d is out of range", c.Offset))
	}
	return &c, nil
}

// fingerprint identifies the question and filters a cursor may be reused
// with.
func fingerprint(q string, f sqlite.Filter) string {
	authors, channels := slices.Clone(f.Authors), slices.Clone(f.Channels)
	slices.Sort(authors)
	slices.Sort(channels)
	b, _ := json.Marshal([]any{q, authors, channels, f.Since, f.Until})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}

// nextPage searches a cursor's plan again and returns the page it points
// to.
func (s *Service) nextPage(ctx context.Context, q string, req Request, version int64) (*Response, error) {
	c, err := decodeCursor(req.Cursor, version, fingerprint(q, req.Filter))
	if err != nil {
		return nil, err
	}
	filter := req.Filter
	if len(c.Authors) > 0 {
		filter.Authors = append(slices.Clone(filter.Authors), c.Authors...)
	}
	results, _, err := s.searchAll(ctx, c.Plan, filter, c.Authors, false)
	if err != nil {
		return nil, err
	}
	if c.Offset >= len(results) {
		return nil, inputErr(fmt.Sprintf("cursor offset %d is out of range", c.Offset))
	}
	limit := pageSize(req.Limit)
	end := min(c.Offset+limit, len(results))
	resp := &Response{Question: q, Plan: c.Plan, PlanSource: c.Source, Authors: c.Authors,
		Results: results[c.Offset:end], Offset: c.Offset, AnswerError: "later page: no summary"}
	if end < len(results) {
		next := *c
		next.Offset = end
		resp.NextCursor = encodeCursor(next)
	}
	return resp, nil
}

func pageSize(limit int) int {
	if limit <= 0 || limit > search.MaxLimit {
		return search.DefaultLimit
	}
	return limit
}
