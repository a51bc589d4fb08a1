package search

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// Keyword results page alike from the in-memory index (which looks up
// only a first page's segments) and from FTS5: every page's messages and
// segments, with one or more results per page, a named author's boost
// reordering them, and each result's segment the one its message is in.
func TestLexicalPagesAlikeInMemory(t *testing.T) {
	fts := setup(t)
	mem := inMemory(t, fts)
	ctx := context.Background()
	pages := func(s *Service, req Request) []string {
		var out []string
		for {
			resp := run(t, s, req)
			var page []int64
			for _, r := range resp.Results {
				segs, err := s.DB.SegmentsOf(ctx, []int64{r.MessageID})
				if err != nil {
					t.Fatal(err)
				}
				if r.SegmentID == 0 || r.SegmentID != segs[r.MessageID] {
					t.Errorf("%+v: message %d given segment %d, stored in %d", req, r.MessageID, r.SegmentID, segs[r.MessageID])
				}
				page = append(page, r.MessageID, r.SegmentID)
			}
			out = append(out, fmt.Sprint(page))
			if resp.NextCursor == "" || len(out) > 20 {
				return out
			}
			req.Cursor = resp.NextCursor
		}
	}
	for _, req := range []Request{
		{Query: "the", Mode: Lexical, Limit: 1},
		{Query: "the", Mode: Lexical, Limit: 2},
		{Query: "the game boiler", Mode: Lexical, Limit: 3},
		{Query: "bob the", Mode: Lexical, Limit: 2},
	} {
		want, got := pages(fts, req), pages(mem, req)
		if len(want) < 2 {
			t.Fatalf("%+v: %d pages; the test wants several", req, len(want))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%+v: in memory, pages (message, segment …)\n%v\nFTS5:\n%v", req, got, want)
		}
		// The pages reach every hit once, a segment's other hits
		// included (a page remembered segments, and skipped them).
		all := req
		all.Limit = MaxLimit
		var every []int64
		for _, r := range run(t, fts, all).Results {
			every = append(every, r.MessageID)
		}
		var paged []int64
		for {
			resp := run(t, fts, req)
			for _, r := range resp.Results {
				paged = append(paged, r.MessageID)
			}
			if resp.NextCursor == "" || len(paged) > len(every) {
				break
			}
			req.Cursor = resp.NextCursor
		}
		if !slices.Equal(paged, every) {
			t.Errorf("%+v: pages showed messages %v; one page of every hit shows %v", req, paged, every)
		}
	}
}
