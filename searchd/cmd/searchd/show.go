package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
	"dsearch/shared/client"
	"dsearch/shared/safesock"
)

func (m *Main) statsCmd() *ffcli.Command {
	var cfg Config
	return command("stats", "[flags]", "print counts and the quantiles of gaps between messages", &cfg, nil,
		func(ctx context.Context, _ []string) error {
			db, err := cfg.OpenDB(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			st, err := db.Stats(ctx)
			if err != nil {
				return err
			}
			m.printStats(st, cfg.Rules)
			return nil
		})
}

func (m *Main) printStats(st *sqlite.Stats, rules segment.Rules) {
	w := m.Stdout
	fmt.Fprintf(w, "guilds %d, channels %d, users %d, messages %d, segments %d (%d overlapping)\n",
		st.Guilds, st.Channels, st.Users, st.Messages, st.Segments, st.OverlappingSegments)
	if st.Messages == 0 {
		return
	}
	fmt.Fprintf(w, "messages from %s to %s\n", usTime(st.FirstAt).Format(time.RFC3339), usTime(st.LastAt).Format(time.RFC3339))
	fmt.Fprintf(w, "\ngap between consecutive messages of a channel (%d gaps):\n", len(st.Gaps))
	var over int
	for _, g := range st.Gaps {
		if g > rules.Gap.Microseconds() {
			over++
		}
	}
	for _, q := range sqlite.Quantiles {
		fmt.Fprintf(w, "  %3.0f%%  %s\n", q*100, FormatGap(time.Duration(sqlite.Quantile(st.Gaps, q))*time.Microsecond))
	}
	if len(st.Gaps) > 0 {
		fmt.Fprintf(w, "  %.1f%% of gaps exceed --gap %s\n", 100*float64(over)/float64(len(st.Gaps)), FormatGap(rules.Gap))
	}
	fmt.Fprintf(w, "\nmessages per segment:\n")
	for _, q := range sqlite.Quantiles {
		fmt.Fprintf(w, "  %3.0f%%  %d\n", q*100, sqlite.Quantile(st.Sizes, q))
	}
}

// FormatGap writes a duration as the blog's table does: 10s, 1m 34s,
// 25m 33s, 1h 45m, 17h 31m, 3d 2h.
func FormatGap(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd %dh", s/86400, s%86400/3600)
}

func (m *Main) segmentCmd() *ffcli.Command {
	var cfg Config
	var limit int
	return command("segment", "ID", "print a conversation segment and the text that would be embedded", &cfg,
		func(fs *flag.FlagSet) { fs.IntVar(&limit, "limit", 200, "most messages to print") },
		func(ctx context.Context, args []string) error {
			if len(args) != 1 {
				return errors.New("segment: give one segment ID")
			}
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return fmt.Errorf("segment: invalid ID %q", args[0])
			}
			db, err := cfg.OpenDB(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			seg, msgs, err := db.Segment(ctx, id, max(limit, segment.MaxTextMessages))
			if err != nil {
				return fmt.Errorf("segment %d: %w", id, err)
			}
			w := m.Stdout
			fmt.Fprintf(w, "segment %d: channel %d, %s, %s to %s\n", seg.ID, seg.ChannelID, plural(seg.MessageCount, "message", "messages"),
				usTime(seg.StartAt).Format(time.RFC3339), usTime(seg.EndAt).Format(time.RFC3339))
			ids := make([]int64, 0, min(limit, len(msgs)))
			for _, msg := range msgs[:min(limit, len(msgs))] {
				ids = append(ids, msg.ID)
			}
			why, err := db.Placements(ctx, cfg.Rules, ids)
			if err != nil {
				return fmt.Errorf("segment %d: %w", id, err)
			}
			fmt.Fprintf(w, "segmenter: %s\n", cfg.Rules.Name())
			var contents []string
			for i, msg := range msgs {
				if !segment.IsSystem(msg.Type) { // a join or a call is history, not talk
					contents = append(contents, msg.Content)
				}
				if i < limit {
					reply := ""
					if msg.ReplyToID != 0 {
						reply = fmt.Sprintf(" (reply to %d)", msg.ReplyToID)
					}
					if segment.IsSystem(msg.Type) {
						reply += " (" + msg.Type + ")"
					}
					fmt.Fprintf(w, "  %d [%s] %s: %s%s\n", msg.ID, usTime(msg.CreatedAt).Format("2006-01-02 15:04:05"), msg.AuthorName,
						api.MessageText(msg.Content, msg.Attachments), reply)
					if p, ok := why[msg.ID]; ok {
						line := placementLine(p)
						if p.Segment != 0 && p.Segment != seg.ID || p.Segment == 0 && msg.ID != seg.StartMessageID {
							line += " (it was placed otherwise: what came before it, or the segmenter, changed since)"
						}
						fmt.Fprintf(w, "      %s\n", line)
					}
				}
			}
			if text := segment.Text(contents); text != "" {
				fmt.Fprintf(w, "embedding text: %s\n", text)
			} else {
				fmt.Fprintf(w, "embedding text: none (under %d content units: not embedded)\n", segment.MinTextUnits)
			}
			return nil
		})
}

// placementLine says why a message is in its conversation.
func placementLine(p sqlite.Placement) string {
	switch p.Kind {
	case "reply":
		return fmt.Sprintf("joined by its Discord reply to %d", p.ParentID)
	case "system":
		return "a system message: stands alone"
	case "time":
		return "placed by the blog's time rules"
	case "link":
		s := fmt.Sprintf("links to %d: score %.2f (p %.2f) over %d candidates; starting a conversation scored %.2f", p.ParentID, p.Score, p.Prob, p.Candidates, p.NewScore)
		if p.Dialogue {
			s += " (not an option: a small group's line that does not change the subject)"
		}
		return s
	}
	if p.Candidates == 0 {
		return "starts a conversation: nothing within the linker's reach before it"
	}
	return fmt.Sprintf("starts a conversation: score %.2f (p %.2f); the best of %d candidates scored %.2f", p.NewScore, p.Prob, p.Candidates, p.BestLink)
}

func (m *Main) statusCmd() *ffcli.Command {
	var cfg Config
	var wait time.Duration
	var printSocket bool
	return command("status", "[flags]", "ask the running daemon, over its socket, whether it is healthy", &cfg,
		func(fs *flag.FlagSet) {
			fs.DurationVar(&wait, "wait", 0, "wait up to this long for the daemon to answer (it listens once its model has loaded)")
			fs.BoolVar(&printSocket, "print-socket", false, "print the socket path searchd uses with this configuration, and exit")
		},
		func(ctx context.Context, _ []string) error {
			if printSocket {
				fmt.Fprintln(m.Stdout, cfg.SocketPath())
				return nil
			}
			c := client.New(cfg.SocketPath())
			h, err := waitHealthy(ctx, c, wait)
			if err != nil {
				return daemonError(err, &cfg)
			}
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			st, err := c.Stats(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(m.Stdout, "searchd %s on %s: schema %d, %d messages in %d segments\n",
				h.Version, cfg.SocketPath(), h.SchemaVersion, st.Messages, st.Segments)
			if e := st.Embedding; e != nil {
				fmt.Fprintln(m.Stdout, embeddingLine(e))
			}
			return nil
		})
}

// waitHealthy asks the health route until it answers or wait has passed
// (once, when wait is 0). Readiness, not a guess at how long start-up
// takes: a model can take seconds to load on a busy machine. A socket the
// client refuses to trust is not waited on.
func waitHealthy(ctx context.Context, c *client.Client, wait time.Duration) (*api.Health, error) {
	deadline := time.Now().Add(wait)
	for {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		h, err := c.Health(actx)
		cancel()
		var ue *safesock.UnsafeError
		if err == nil || errors.As(err, &ue) || !time.Now().Before(deadline) {
			return h, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func usTime(us int64) time.Time { return time.UnixMicro(us).UTC() }

// embeddingLine says how far the daemon's embedding has come.
func embeddingLine(e *api.EmbeddingStats) string {
	switch {
	case e.Phase == "waiting":
		return fmt.Sprintf("embedding (%s): waiting, %s is embedding this database", e.Model, e.Elsewhere)
	case e.SegmentsEmbedded >= e.Segments && e.MessagesEmbedded >= e.Messages:
		return fmt.Sprintf("embedding (%s): up to date, %d vectors in memory", e.Model, e.VectorsInMemory)
	}
	line := fmt.Sprintf("embedding (%s): segments %d of %d (%.1f %%), messages %d of %d", e.Model,
		e.SegmentsEmbedded, e.Segments, 100*float64(e.SegmentsEmbedded)/float64(max(e.Segments, 1)), e.MessagesEmbedded, e.Messages)
	if e.SegmentsPooled > 0 {
		line += fmt.Sprintf("; %d more segments searched by the mean of their messages until their text is embedded", e.SegmentsPooled)
	}
	if e.SegmentsPerSecond > 0 {
		line += fmt.Sprintf(", %.1f segments/s", e.SegmentsPerSecond)
	}
	if e.ETASeconds > 0 {
		line += fmt.Sprintf(", about %s left", (time.Duration(e.ETASeconds) * time.Second).Round(time.Second))
	}
	if e.LastError != "" {
		line += "; last error: " + e.LastError
	}
	return line
}
