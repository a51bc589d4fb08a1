package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"dsearch/searchd/answer"
	"dsearch/shared/api"
	"dsearch/shared/client"
)

// timeHelp is the help of --since and --until.
const timeHelp = "time: a date, month or year, relative (yesterday, last week, 7d, 어제, 지난주, 3월), RFC 3339, or Unix µs"

func (m *Main) queryCmd() *ffcli.Command {
	var cfg Config
	var limit int
	var author, channel, since, until string
	return command("query", "[flags] QUESTION", "ask the running daemon a question: a cited answer and the conversations found", &cfg,
		func(fs *flag.FlagSet) {
			fs.IntVar(&limit, "limit", 5, "conversations to show")
			fs.StringVar(&author, "author", "", "comma-separated author IDs")
			fs.StringVar(&channel, "channel", "", "comma-separated channel names (general, #general) or IDs")
			fs.StringVar(&since, "since", "", "earliest "+timeHelp)
			fs.StringVar(&until, "until", "", "latest time, as --since (a date takes in its whole day)")
		},
		func(ctx context.Context, args []string) error {
			q := strings.Join(args, " ")
			if q == "" {
				return errors.New("query: ask a question, e.g. searchd query \"who is moving?\"")
			}
			req := &api.QueryRequest{Question: q, Limit: limit}
			var err error
			if req.Since, req.Until, err = timeBounds("query", since, until, time.Now()); err != nil {
				return err
			}
			for _, s := range strings.Split(author, ",") {
				if s = strings.TrimSpace(s); s == "" {
					continue
				}
				id, err := api.ParseID(s)
				if err != nil {
					return fmt.Errorf("query: --author: %q is not a member's ID (a number, as Discord's Copy User ID gives)", s)
				}
				req.Authors = append(req.Authors, id)
			}
			ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			defer cancel()
			c := client.New(cfg.SocketPath())
			if channel != "" {
				if req.Channels, err = resolveChannels(ctx, c, channel); err != nil {
					return daemonError(err, &cfg)
				}
			}
			resp, err := c.Query(ctx, req)
			if err != nil {
				return daemonError(err, &cfg)
			}
			w := m.Stdout
			fmt.Fprintf(w, "plan (%s): %q keywords %q\n", resp.Plan.Source, resp.Plan.Subqueries, resp.Plan.Keywords)
			if note := resp.TimeNote(); note != "" {
				fmt.Fprintf(w, "time: %s\n", note)
			}
			if resp.Plan.Source == "rules" && resp.Plan.Error != "" {
				// Why the LLM's plan was not taken, a line per try (it
				// never quotes the model's output or the question).
				for _, line := range strings.Split(resp.Plan.Error, "\n") {
					fmt.Fprintf(w, "  (LLM plan: %s)\n", line)
				}
			}
			if resp.Answer != "" {
				fmt.Fprintf(w, "\n%s\n\n", resp.Answer)
			} else if resp.AnswerError != "" {
				fmt.Fprintf(w, "(no answer: %s)\n", resp.AnswerError)
			}
			if len(resp.Results) == 0 {
				fmt.Fprintln(w, "no conversation matched")
			} else if resp.NoConfidentResults {
				fmt.Fprintln(w, "nothing clearly matched: the closest results, with low confidence")
			}
			for i, r := range resp.Results {
				fmt.Fprintf(w, "[%d] %s\n", i+1, resultLine(&r))
				for _, p := range r.Previews[:min(2, len(r.Previews))] {
					fmt.Fprintf(w, "     %s: %s\n", p.AuthorName, p.Text())
				}
			}
			return nil
		})
}

func (m *Main) catchupCmd() *ffcli.Command {
	var cfg Config
	var channel, since, until string
	return command("catchup", "--channel NAME|ID [--since TIME] [--until TIME]", "the conversations of a channel since a time, a line each", &cfg,
		func(fs *flag.FlagSet) {
			fs.StringVar(&channel, "channel", "", "channel name (general or #general) or ID (required)")
			fs.StringVar(&since, "since", "", "earliest "+timeHelp+" (default: the latest conversations)")
			fs.StringVar(&until, "until", "", "latest time, as --since (a date takes in its whole day; default: now)")
		},
		func(ctx context.Context, _ []string) error {
			if channel == "" {
				return errors.New("catchup: name a channel: --channel general (or its ID)")
			}
			sinceUS, untilUS, err := timeBounds("catchup", since, until, time.Now())
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			defer cancel()
			c := client.New(cfg.SocketPath())
			ids, err := resolveChannels(ctx, c, channel)
			if err != nil {
				return daemonError(err, &cfg)
			}
			if len(ids) != 1 {
				return fmt.Errorf("catchup: %q names %d channels (%v): give one ID", channel, len(ids), ids)
			}
			// One more than is printed tells whether older conversations
			// were left out, which is said.
			req := &api.CatchupRequest{Channel: ids[0], Since: sinceUS, Until: untilUS, Limit: answer.DefaultCatchup + 1}
			resp, err := c.Catchup(ctx, req)
			if err != nil {
				return daemonError(err, &cfg)
			}
			more := len(resp.Conversations) > answer.DefaultCatchup
			if more {
				resp.Conversations = resp.Conversations[:answer.DefaultCatchup]
			}
			if len(resp.Conversations) == 0 && until != "" {
				fmt.Fprintf(m.Stdout, "nothing was said in %s from %s to %s\n", channel, cmp.Or(since, "the start"), until)
			} else if len(resp.Conversations) == 0 && since != "" {
				fmt.Fprintf(m.Stdout, "nothing was said in %s since %s\n", channel, since)
			} else if len(resp.Conversations) == 0 {
				fmt.Fprintf(m.Stdout, "nothing was said in %s\n", channel)
			}
			for _, c := range resp.Conversations {
				line := c.Summary
				if line == "" && len(c.Preview) > 0 {
					if line = c.Preview[0].Text(); !strings.HasPrefix(line, "(") {
						line = "(" + line + ")"
					}
				}
				fmt.Fprintf(m.Stdout, "%s  %s  %s  conversation %d  %s\n", c.StartAt.Local().Format("2006-01-02 15:04"),
					plural(c.MessageCount, "message", "messages"), line, c.SegmentID, c.URL)
			}
			if more {
				fmt.Fprintf(m.Stdout, "(only the %d newest conversations are shown: searchd search WORDS --channel %s --until DATE finds older ones)\n", answer.DefaultCatchup, channel)
			}
			if resp.SummaryError != "" {
				fmt.Fprintf(m.Stdout, "(no summaries: %s)\n", resp.SummaryError)
			}
			return nil
		})
}

func (m *Main) searchCmd() *ffcli.Command {
	var cfg Config
	var mode, keywords, author, channel, since, until, cursor string
	var limit int
	return command("search", "[flags] QUERY", "search the running daemon over its socket", &cfg,
		func(fs *flag.FlagSet) {
			fs.StringVar(&mode, "mode", "", "pipeline, semantic, lexical or hybrid (default: the daemon's, pipeline with a model, else lexical)")
			fs.StringVar(&keywords, "keywords", "", "comma-separated words that must appear verbatim")
			fs.StringVar(&author, "author", "", "comma-separated author IDs")
			fs.StringVar(&channel, "channel", "", "comma-separated channel names (general, #general) or IDs")
			fs.StringVar(&since, "since", "", "earliest "+timeHelp)
			fs.StringVar(&until, "until", "", "latest time, as --since (a date takes in its whole day)")
			fs.IntVar(&limit, "limit", 10, "results per page")
			fs.StringVar(&cursor, "cursor", "", "next page, from a previous search")
		},
		func(ctx context.Context, args []string) error {
			q := strings.Join(args, " ")
			if q == "" && keywords == "" {
				return errors.New("search: give a query, e.g. searchd search boiler --since 7d")
			}
			v := url.Values{"q": {q}, "limit": {strconv.Itoa(limit)}}
			sinceUS, untilUS, err := timeBounds("search", since, until, time.Now())
			if err != nil {
				return err
			}
			for k, s := range map[string]string{"since": sinceUS, "until": untilUS, "mode": mode, "keywords": keywords, "author": author, "cursor": cursor} {
				if s != "" {
					v.Set(k, s)
				}
			}
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			c := client.New(cfg.SocketPath())
			if channel != "" {
				ids, err := resolveChannels(ctx, c, channel)
				if err != nil {
					return daemonError(err, &cfg)
				}
				for _, id := range ids {
					v.Add("channel", id.String())
				}
			}
			resp, err := c.Search(ctx, v)
			if err != nil {
				return daemonError(err, &cfg)
			}
			m.printSearch(m.Stdout, resp)
			return nil
		})
}

// timeBounds reads --since and --until as people type them into Unix µs
// for the API ("" when not given).
func timeBounds(cmd, since, until string, now time.Time) (string, string, error) {
	var out [2]string
	for i, s := range []string{since, until} {
		us, err := answer.ParseBound(s, i == 1, now)
		if err != nil {
			return "", "", fmt.Errorf("%s: --%s: %w", cmd, []string{"since", "until"}[i], err)
		}
		if us != 0 {
			out[i] = strconv.FormatInt(us, 10)
		}
	}
	return out[0], out[1], nil
}

func (m *Main) printSearch(w io.Writer, resp *api.SearchResponse) {
	if resp.KeywordFallback {
		fmt.Fprintln(w, "(no conversation had the keywords: searched without them)")
	}
	if resp.NoConfidentResults && len(resp.Results) > 0 {
		fmt.Fprintln(w, "nothing clearly matched: the closest results, with low confidence")
	}
	switch {
	case resp.Unread && resp.Mode == "hybrid":
		fmt.Fprintln(w, "(the embedding model cannot read this query: ranked by its words)")
	case resp.Unread:
		fmt.Fprintln(w, "(the embedding model cannot read this query: --mode hybrid or lexical ranks by its words)")
	case resp.LexicalLeftOut:
		fmt.Fprintln(w, "(no keyword hit held enough of the query's words: ranked by meaning)")
	}
	// A fused ranking puts exact word matches first, whatever their fused
	// score: show each retriever's rank then, so numbers read in order.
	ordered := slices.IsSortedFunc(resp.Results, func(a, b api.SearchResult) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	for i, r := range resp.Results {
		score := fmt.Sprintf("%.3f", r.Score)
		if !ordered {
			score = componentRanks(r.Components)
		}
		fmt.Fprintf(w, "%d. %s  %s\n", i+1, score, resultLine(&r))
		for _, p := range r.Previews {
			fmt.Fprintf(w, "     %s: %s\n", p.AuthorName, p.Text())
		}
	}
	if len(resp.Results) == 0 && !resp.NoConfidentResults {
		fmt.Fprintf(w, "nothing matched (%s mode)\n", resp.Mode)
	} else {
		fmt.Fprintf(w, "%d of %d results (%s mode), %.1f ms (query embedding %.1f ms)\n", len(resp.Results), resp.Total, resp.Mode, resp.TookMillis, resp.QueryEmbedMillis)
	}
	if resp.NextCursor != "" {
		fmt.Fprintf(w, "next page: --cursor %s\n", resp.NextCursor)
	}
}

// componentRanks is "lexical #1, semantic #4".
func componentRanks(cs map[string]api.Component) string {
	var parts []string
	for _, k := range []string{"lexical", "semantic"} {
		if c, ok := cs[k]; ok && c.Rank > 0 {
			parts = append(parts, fmt.Sprintf("%s #%d", k, c.Rank))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// resultLine is a result's place, time, people and the ID to follow it
// up with (searchd segment ID).
func resultLine(r *api.SearchResult) string {
	where := "#" + r.ChannelName
	if r.ChannelName == "" {
		where = "channel " + r.ChannelID.String()
	}
	line := fmt.Sprintf("%s  %s  %s  (%s)", where, r.StartAt.Local().Format("2006-01-02 15:04"),
		strings.Join(r.Authors, ", "), plural(r.MessageCount, "message", "messages"))
	if r.SegmentID != 0 {
		line += fmt.Sprintf("  conversation %d", r.SegmentID)
	}
	return line + lowMark(r) + "  " + r.URL
}

// lowMark marks a result that is only the closest thing found.
func lowMark(r *api.SearchResult) string {
	if r.Confidence.Low() {
		return "  (low confidence)"
	}
	return ""
}

// resolveChannels reads a comma-separated list of channel IDs and names
// ("general", "#general"); a name may match channels of several servers.
func resolveChannels(ctx context.Context, c *client.Client, list string) ([]api.ID, error) {
	var ids []api.ID
	var known []api.Channel
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if id, err := api.ParseID(s); err == nil {
			ids = append(ids, id)
			continue
		}
		if known == nil {
			var err error
			if known, err = c.Channels(ctx); err != nil {
				return nil, err
			}
		}
		name := strings.TrimPrefix(s, "#")
		var found bool
		for _, ch := range known {
			if strings.EqualFold(ch.Name, name) {
				ids, found = append(ids, ch.ID), true
			}
		}
		if !found {
			return nil, fmt.Errorf("no channel is named %q (channels with messages: %s)", name, channelNames(known))
		}
	}
	return ids, nil
}

func channelNames(cs []api.Channel) string {
	var names []string
	for _, c := range cs {
		if !slices.Contains(names, "#"+c.Name) {
			names = append(names, "#"+c.Name)
		}
	}
	if len(names) > 20 {
		names = append(names[:20], "…")
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// daemonError says what went wrong with a request to searchd in a user's
// words: a daemon that is not running and how to start it, or the
// daemon's own message without the transport's wrapping.
func daemonError(err error, cfg *Config) error {
	var ae *api.Error
	switch {
	case errors.Is(err, client.ErrNotRunning):
		return fmt.Errorf("searchd is not running (nothing at %s); start it with `searchd serve --model DIR` (or `make run`), "+
			"with the same --data and --socket as here", cfg.SocketPath())
	case errors.As(err, &ae) && ae.Status >= 500:
		return fmt.Errorf("the daemon failed: %s", ae.Message)
	case errors.As(err, &ae):
		return errors.New(ae.Message)
	}
	return err
}
