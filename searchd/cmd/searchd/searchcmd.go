package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"dsearch/shared/api"
	"dsearch/shared/client"
)

func (m *Main) queryCmd() *ffcli.Command {
	var cfg Config
	return command("query", "[flags] QUESTION", "ask the running daemon a question: a cited answer and the conversations found", &cfg, nil,
		func(ctx context.Context, args []string) error {
			q := strings.Join(args, " ")
			if q == "" {
				return errors.New("query: ask a question")
			}
			ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			defer cancel()
			resp, err := client.New(cfg.SocketPath()).Query(ctx, &api.QueryRequest{Question: q, Limit: 5})
			if err != nil {
				return err
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
			} else {
				fmt.Fprintf(w, "(no answer: %s)\n", resp.AnswerError)
			}
			for i, r := range resp.Results {
				fmt.Fprintf(w, "[%d] %s  %s  %s\n", i+1, r.StartAt.Format("2006-01-02 15:04"), strings.Join(r.Authors, ", "), r.URL)
				for _, p := range r.Previews[:min(2, len(r.Previews))] {
					fmt.Fprintf(w, "     %s: %s\n", p.AuthorName, p.Text())
				}
			}
			return nil
		})
}

func (m *Main) catchupCmd() *ffcli.Command {
	var cfg Config
	var channel, since string
	return command("catchup", "--channel ID [--since TIME]", "the conversations of a channel since a time, a line each", &cfg,
		func(fs *flag.FlagSet) {
			fs.StringVar(&channel, "channel", "", "channel ID (required)")
			fs.StringVar(&since, "since", "", "earliest time (RFC 3339, date, or Unix µs)")
		},
		func(ctx context.Context, _ []string) error {
			id, err := api.ParseID(channel)
			if err != nil {
				return fmt.Errorf("catchup: --channel: %w", err)
			}
			ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			defer cancel()
			resp, err := client.New(cfg.SocketPath()).Catchup(ctx, &api.CatchupRequest{Channel: id, Since: since})
			if err != nil {
				return err
			}
			for _, c := range resp.Conversations {
				line := c.Summary
				if line == "" && len(c.Preview) > 0 {
					if line = c.Preview[0].Text(); !strings.HasPrefix(line, "(") {
						line = "(" + line + ")"
					}
				}
				fmt.Fprintf(m.Stdout, "%s  %3d messages  %s  %s\n", c.StartAt.Format("2006-01-02 15:04"), c.MessageCount, line, c.URL)
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
			fs.StringVar(&mode, "mode", "pipeline", "pipeline, semantic, lexical or hybrid")
			fs.StringVar(&keywords, "keywords", "", "comma-separated words that must appear verbatim")
			fs.StringVar(&author, "author", "", "comma-separated author IDs")
			fs.StringVar(&channel, "channel", "", "comma-separated channel IDs")
			fs.StringVar(&since, "since", "", "earliest time (RFC 3339, date, or Unix µs)")
			fs.StringVar(&until, "until", "", "latest time")
			fs.IntVar(&limit, "limit", 10, "results per page")
			fs.StringVar(&cursor, "cursor", "", "next page, from a previous search")
		},
		func(ctx context.Context, args []string) error {
			q := strings.Join(args, " ")
			if q == "" && keywords == "" {
				return errors.New("search: give a query")
			}
			v := url.Values{"q": {q}, "mode": {mode}, "limit": {fmt.Sprint(limit)}}
			for k, s := range map[string]string{"keywords": keywords, "author": author, "channel": channel,
				"since": since, "until": until, "cursor": cursor} {
				if s != "" {
					v.Set(k, s)
				}
			}
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			resp, err := client.New(cfg.SocketPath()).Search(ctx, v)
			if err != nil {
				return err
			}
			w := m.Stdout
			if resp.KeywordFallback {
				fmt.Fprintln(w, "(no conversation had the keywords: searched without them)")
			}
			if resp.NoConfidentResults {
				fmt.Fprintln(w, "nothing similar enough was found")
			}
			switch {
			case resp.Unread && resp.Mode == "hybrid":
				fmt.Fprintln(w, "(the embedding model cannot read this query: ranked by its words)")
			case resp.Unread:
				fmt.Fprintln(w, "(the embedding model cannot read this query: --mode hybrid or lexical ranks by its words)")
			}
			for i, r := range resp.Results {
				fmt.Fprintf(w, "%d. %.3f  %s  %s  (%d messages)  %s\n", i+1, r.Score, r.StartAt.Format("2006-01-02 15:04"),
					strings.Join(r.Authors, ", "), r.MessageCount, r.URL)
				for _, p := range r.Previews {
					fmt.Fprintf(w, "     %s: %s\n", p.AuthorName, p.Text())
				}
			}
			fmt.Fprintf(w, "%d of %d results, %.1f ms (query embedding %.1f ms)\n", len(resp.Results), resp.Total, resp.TookMillis, resp.QueryEmbedMillis)
			if resp.NextCursor != "" {
				fmt.Fprintf(w, "next page: --cursor %s\n", resp.NextCursor)
			}
			return nil
		})
}
