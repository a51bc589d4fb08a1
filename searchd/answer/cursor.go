package answer

import (
	"context"
	"slices"

	"dsearch/searchd/search"
	"dsearch/searchd/sqlite"
)

// A queryCursor carries an answer's plan to its next page, so paging never
// asks the LLM again. It is refused, like a search cursor, once new data
// messages arrived or with another question or filter.
type queryCursor struct {
	search.Cursor
	Plan Plan `json:"p"`
	// Question is 1 + the index of the question's own subquery in an LLM
	// plan (--keep-question), weighed above the others; 0 when none.
	Question int     `json:"q,omitempty"`
	Source   string  `json:"s"`
	Authors  []int64 `json:"a,omitempty"`
	// Since and Until are the time the question's date named, when the
	// first page was searched within it (Response.Since).
	Since int64 `json:"t0,omitempty"`
	Until int64 `json:"t1,omitempty"`
}

// fingerprint identifies the question and filters a cursor may be reused
// with, and the audience's channels (which weigh keyword scores).
func fingerprint(q string, f sqlite.Filter, readable []int64) string {
	return search.Fingerprint(q, search.Sorted(f.Authors), search.Sorted(f.Channels), f.Since, f.Until, search.Sorted(readable))
}

// nextPage searches a cursor's plan again and returns the page it points
// to.
func (s *Service) nextPage(ctx context.Context, q string, req Request, version int64) (*Response, error) {
	var c queryCursor
	if err := search.DecodeCursor(req.Cursor, &c, version, fingerprint(q, req.Filter, req.Readable)); err != nil {
		return nil, &search.InputError{Err: err}
	}
	// A client can forge a cursor: its plan is checked like the LLM's,
	// without the question's own subquery (a fifth beside four of the
	// model's).
	question := c.Question - 1
	model := c.Plan
	if question >= 0 && question < len(c.Plan.Subqueries) && len(c.Plan.Subqueries) > 1 {
		model.Subqueries = slices.Delete(slices.Clone(c.Plan.Subqueries), question, question+1)
	}
	if c.Source == "rules" && len(c.Plan.Subqueries) == 1 && len(c.Plan.Subqueries[0]) <= 1000 {
		// A plan by rules is the question alone, which takes 1,000
		// bytes, not a model's phrase of 100 characters: checked as a
		// question, or every longer question's More was refused.
		model.Subqueries = []string{"question"}
	}
	if err := model.validate(nil); err != nil || question < -1 || question >= len(c.Plan.Subqueries) || len(c.Authors) > search.MaxFilterIDs {
		return nil, inputErr("invalid cursor")
	}
	filter := req.Filter
	if c.Since != 0 || c.Until != 0 {
		// Only ever narrower than the caller's own filter, forged or not.
		var ok bool
		if filter, ok = (span{c.Since, c.Until}).narrow(filter); !ok || c.Since == 0 || c.Until == 0 {
			return nil, inputErr("invalid cursor")
		}
	}
	results, _, _, err := s.searchAll(ctx, c.Plan, question, filter, req.Readable, c.Authors, false)
	if err != nil {
		return nil, err
	}
	offset := c.Offset
	page, more, err := c.Page(results, pageSize(req.Limit), search.BySegment)
	if err != nil {
		return nil, &search.InputError{Err: err}
	}
	resp := &Response{Question: q, Plan: c.Plan, PlanSource: c.Source, Authors: c.Authors,
		Results: page, Offset: offset, AnswerError: "later page: no summary"}
	if c.Since != 0 {
		resp.Since, resp.Until = filter.Since, filter.Until
	}
	if more {
		resp.NextCursor = search.EncodeCursor(c)
	}
	return resp, nil
}

func pageSize(limit int) int {
	if limit <= 0 || limit > search.MaxLimit {
		return search.DefaultLimit
	}
	return limit
}
