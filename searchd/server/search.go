package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/answer"
	"dsearch/searchd/search"
	"dsearch/shared/api"
)

// searchParams are the query parameters GET /v1/search accepts.
var searchParams = map[string]bool{"q": true, "keywords": true, "author": true, "channel": true, "readable": true, "since": true,
	"until": true, "mode": true, "limit": true, "cursor": true, "ranked": true}

func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	if s.Search == nil {
		return errorf(http.StatusServiceUnavailable, "search is not available")
	}
	req, err := ParseSearch(r.URL.Query())
	if err != nil {
		return errorf(http.StatusBadRequest, "%v", err)
	}
	start := time.Now()
	resp, err := s.Search.Search(r.Context(), *req)
	var ie *search.InputError
	switch {
	case errors.As(err, &ie):
		return errorf(http.StatusBadRequest, "%v", ie)
	case errors.Is(err, search.ErrNoModel), errors.Is(err, search.ErrKeywordsLoading):
		return errorf(http.StatusServiceUnavailable, "%v", err)
	case err != nil:
		return err
	}
	out := api.SearchResponse{Mode: string(resp.Mode), Total: resp.Total, NextCursor: resp.NextCursor,
		KeywordFallback: resp.KeywordFallback, NoConfidentResults: resp.NoConfidentResults,
		Results: make([]api.SearchResult, len(resp.Results)), QueryEmbedMillis: ms(resp.QueryEmbedTime),
		EmbeddedMessages: resp.EmbeddedMessages}
	if resp.Mode != search.Lexical {
		out.Reading, out.Unread = &resp.Reading, resp.Unread
		out.LexicalLeftOut = resp.LexicalLeftOut
	}
	for i, res := range resp.Results {
		out.Results[i] = apiResult(res)
	}
	if err := s.nameChannels(r.Context(), out.Results); err != nil {
		return err
	}
	for _, id := range resp.RankedMessages {
		out.RankedMessages = append(out.RankedMessages, api.ID(id))
	}
	out.TookMillis = ms(time.Since(start))
	return writeJSON(w, http.StatusOK, out)
}

// apiResult converts a search result to the API's form.
func apiResult(res search.Result) api.SearchResult {
	comps := map[string]api.Component{}
	for k, c := range res.Components {
		comps[k] = api.Component{Rank: c.Rank, Score: c.Score}
	}
	out := api.SearchResult{SegmentID: res.SegmentID, MessageID: api.ID(res.MessageID),
		ChannelID: api.ID(res.ChannelID), StartAt: usTime(res.StartAt), MessageCount: res.MessageCount,
		Authors: res.Authors, Score: res.Score, Components: comps, Previews: apiMessages(res.Previews),
		Confidence: api.Confidence{Level: "low", Standout: res.Confidence.Standout, Support: res.Confidence.Support,
			Closeness: res.Confidence.Closeness, Together: res.Confidence.Together},
		URL: api.JumpURL(api.ID(res.GuildID), api.ID(res.ChannelID), api.ID(res.MessageID))}
	if out.Authors == nil {
		out.Authors = []string{}
	}
	for _, id := range res.AuthorIDs {
		out.AuthorIDs = append(out.AuthorIDs, api.ID(id))
	}
	if res.Confidence.High {
		out.Confidence.Level = "high"
	}
	return out
}

// channels lists the channels and threads that hold messages.
func (s *Server) channels(w http.ResponseWriter, r *http.Request) error {
	cs, err := s.DB.Channels(r.Context())
	if err != nil {
		return err
	}
	out := make([]api.Channel, len(cs))
	for i, c := range cs {
		out[i] = api.Channel{ID: api.ID(c.ID), GuildID: api.ID(c.GuildID), Name: c.Name, Kind: c.Kind}
	}
	return writeJSON(w, http.StatusOK, out)
}

// nameChannels fills in each result's channel name, and a thread's
// parent.
func (s *Server) nameChannels(ctx context.Context, results []api.SearchResult) error {
	if len(results) == 0 {
		return nil
	}
	cs, err := s.DB.Channels(ctx)
	if err != nil {
		return err
	}
	names := make(map[api.ID]string, len(cs))
	parents := map[api.ID]api.ID{}
	for _, c := range cs {
		names[api.ID(c.ID)] = c.Name
		if searchd.IsThread(c.Kind) {
			parents[api.ID(c.ID)] = api.ID(c.ParentID)
		}
	}
	for i := range results {
		results[i].ChannelName = names[results[i].ChannelID]
		results[i].ParentID = parents[results[i].ChannelID]
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// ParseSearch reads a search request from query parameters. Lists
// (keywords, author, channel) may repeat or be comma-separated; times are
// Unix microseconds or RFC 3339.
func ParseSearch(v url.Values) (*search.Request, error) {
	for k := range v {
		if !searchParams[k] {
			return nil, fmt.Errorf("unknown parameter %q", k)
		}
	}
	req := &search.Request{Query: v.Get("q"), Mode: search.Mode(v.Get("mode")), Cursor: v.Get("cursor")}
	list := func(name string) []string {
		var out []string
		for _, s := range v[name] {
			for _, p := range strings.Split(s, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
		}
		return out
	}
	req.Keywords = list("keywords")
	var err error
	if req.Filter.Authors, err = ids(list("author")); err != nil {
		return nil, fmt.Errorf("author: %w", err)
	}
	if req.Filter.Channels, err = ids(list("channel")); err != nil {
		return nil, fmt.Errorf("channel: %w", err)
	}
	if req.Readable, err = ids(list("readable")); err != nil {
		return nil, fmt.Errorf("readable: %w", err)
	}
	if req.Filter.Since, err = parseTime(v.Get("since")); err != nil {
		return nil, fmt.Errorf("since: %w", err)
	}
	if req.Filter.Until, err = parseUntil(v.Get("until")); err != nil {
		return nil, fmt.Errorf("until: %w", err)
	}
	if l := v.Get("limit"); l != "" {
		if req.Limit, err = strconv.Atoi(l); err != nil || req.Limit < 1 || req.Limit > search.MaxLimit {
			return nil, fmt.Errorf("limit must be from 1 to %d", search.MaxLimit)
		}
	}
	req.RankedMessages = v.Get("ranked") == "1" || v.Get("ranked") == "true"
	return req, nil
}

func ids(ss []string) ([]int64, error) {
	if len(ss) > search.MaxFilterIDs {
		return nil, fmt.Errorf("at most %d values", search.MaxFilterIDs)
	}
	out := make([]int64, len(ss))
	for i, s := range ss {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid id %q", s)
		}
		out[i] = id
	}
	return out, nil
}

// parseTime reads a since bound: Unix microseconds or RFC 3339 (a date
// alone means its start, UTC).
func parseTime(s string) (int64, error) { return parseBound(s, false) }

// parseUntil reads an until bound. Bounds are inclusive, so a date alone
// means its last microsecond: until=D takes in all of day D.
func parseUntil(s string) (int64, error) { return parseBound(s, true) }

func parseBound(s string, until bool) (int64, error) {
	// The question pipeline's reading of dates, so that a filter takes
	// what a question does ("yesterday", "2024/05/01", "3월", "7d").
	return answer.ParseBound(s, until, time.Now())
}
