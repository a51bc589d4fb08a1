package server

import (
	"errors"
	"net/http"
	"slices"
	"time"

	"dsearch/searchd/answer"
	"dsearch/searchd/search"
	"dsearch/shared/api"
)

func (s *Server) query(w http.ResponseWriter, r *http.Request) error {
	if s.Answer == nil {
		return errorf(http.StatusServiceUnavailable, "question answering is not available")
	}
	var in api.QueryRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	req := answer.Request{Question: in.Question, Limit: in.Limit, Cursor: in.Cursor}
	if len(in.Authors) > search.MaxFilterIDs || len(in.Channels) > search.MaxFilterIDs || len(in.Readable) > search.MaxFilterIDs {
		return errorf(http.StatusBadRequest, "at most %d values per filter", search.MaxFilterIDs)
	}
	for _, a := range in.Authors {
		req.Filter.Authors = append(req.Filter.Authors, int64(a))
	}
	for _, c := range in.Channels {
		req.Filter.Channels = append(req.Filter.Channels, int64(c))
	}
	for _, c := range in.Readable {
		req.Readable = append(req.Readable, int64(c))
	}
	var err error
	if req.Filter.Since, req.Filter.Until, err = parseRange(in.Since, in.Until); err != nil {
		return err
	}
	if in.Limit < 0 || in.Limit > search.MaxLimit {
		return errorf(http.StatusBadRequest, "limit must be from 1 to %d", search.MaxLimit)
	}
	start := time.Now()
	resp, err := s.Answer.Query(r.Context(), req)
	var ie *search.InputError
	switch {
	case errors.As(err, &ie):
		return errorf(http.StatusBadRequest, "%v", ie)
	case errors.Is(err, search.ErrKeywordsLoading):
		return errorf(http.StatusServiceUnavailable, "%v", search.ErrKeywordsLoading)
	case err != nil:
		return err
	}
	out := api.QueryResponse{Question: resp.Question, Answer: resp.Answer, AnswerError: resp.AnswerError, NoConfidentResults: resp.NoConfidentResults,
		Plan:    api.QueryPlan{Subqueries: resp.Plan.Subqueries, Keywords: resp.Plan.Keywords, Source: resp.PlanSource, Error: resp.PlanError},
		Results: make([]api.SearchResult, len(resp.Results)), Offset: resp.Offset, NextCursor: resp.NextCursor}
	if out.Plan.Keywords == nil {
		out.Plan.Keywords = []string{}
	}
	for _, a := range resp.Authors {
		out.Authors = append(out.Authors, api.ID(a))
	}
	if resp.Since != 0 {
		out.Time = &api.TimeSpan{Since: time.UnixMicro(resp.Since).UTC(), Until: time.UnixMicro(resp.Until).UTC()}
	}
	out.TimeFallback = resp.TimeFallback
	for i, res := range resp.Results {
		out.Results[i] = apiResult(res)
	}
	if err := s.nameChannels(r.Context(), out.Results); err != nil {
		return err
	}
	out.TookMillis = ms(time.Since(start))
	s.Log.Info("question answered", "plan", resp.PlanSource, "results", len(resp.Results), "answered", resp.Answer != "", "took_ms", out.TookMillis)
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) catchup(w http.ResponseWriter, r *http.Request) error {
	if s.Answer == nil {
		return errorf(http.StatusServiceUnavailable, "catch-up is not available")
	}
	var in api.CatchupRequest
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Limit < 0 || in.Limit > answer.MaxCatchup {
		return errorf(http.StatusBadRequest, "limit must be from 1 to %d (0: %d)", answer.MaxCatchup, answer.DefaultCatchup)
	}
	req := answer.CatchupRequest{Channel: int64(in.Channel), Limit: in.Limit}
	var err error
	if req.Since, req.Until, err = parseRange(in.Since, in.Until); err != nil {
		return err
	}
	resp, err := s.Answer.Catchup(r.Context(), req)
	var ie *search.InputError
	switch {
	case errors.As(err, &ie):
		return errorf(http.StatusBadRequest, "%v", ie)
	case err != nil:
		return err
	}
	out := api.CatchupResponse{SummaryError: resp.SummaryError, Conversations: []api.Conversation{}}
	for _, c := range resp.Conversations {
		sg := c.Segment
		out.Conversations = append(out.Conversations, api.Conversation{SegmentID: sg.ID, StartAt: usTime(sg.StartAt),
			EndAt: usTime(sg.EndAt), MessageCount: sg.MessageCount, Summary: c.Summary, Keywords: c.Keywords,
			Cached: c.Cached, Preview: apiMessages(c.Messages),
			URL: api.JumpURL(api.ID(sg.GuildID), api.ID(sg.ChannelID), api.ID(sg.StartMessageID))})
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) aliases(w http.ResponseWriter, r *http.Request) error {
	names, err := s.DB.AuthorNames(r.Context(), nil)
	if err != nil {
		return err
	}
	if s.Answer != nil {
		for n, ids := range s.Answer.Aliases {
			names[n] = append(names[n], ids...)
		}
	}
	out := make([]api.Alias, 0, len(names))
	for n, ids := range names {
		a := api.Alias{Name: n}
		for _, id := range ids {
			if !slices.Contains(a.Users, api.ID(id)) {
				a.Users = append(a.Users, api.ID(id))
			}
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b api.Alias) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return writeJSON(w, http.StatusOK, out)
}

// parseRange reads the since/until bounds of a request body.
func parseRange(since, until string) (int64, int64, error) {
	s, err := parseTime(since)
	if err != nil {
		return 0, 0, errorf(http.StatusBadRequest, "since: %v", err)
	}
	u, err := parseUntil(until)
	if err != nil {
		return 0, 0, errorf(http.StatusBadRequest, "until: %v", err)
	}
	if s != 0 && u != 0 && s > u {
		return 0, 0, errorf(http.StatusBadRequest, "since is after until")
	}
	return s, u, nil
}
