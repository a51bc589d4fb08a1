package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"dsearch/searchd"
	"dsearch/searchd/export"
	"dsearch/searchd/ingest"
	"dsearch/searchd/segment/segeval"
	"dsearch/searchd/sqlite"
)

// scratchImport imports the exports under every dir into one scratch
// database with the configured segmentation; done closes it. Without
// keep the database is thrown away by done. With keep it stays in that
// directory and, when it is there already for the same dirs, is used as
// it is: a second run embeds nothing (sqlite.DB.CheckModel keeps one
// model's vectors from being mixed with another's). A keep directory
// that holds another import is refused.
func scratchImport(ctx context.Context, cfg *Config, dirs []string, keep string) (*sqlite.DB, func(), error) {
	want := strings.Join(dirs, "\n") + "\n"
	if keep != "" {
		b, err := os.ReadFile(filepath.Join(keep, "imported"))
		if err == nil && string(b) != want {
			return nil, nil, fmt.Errorf("--keep %s holds another import (%s), not %s: use another directory",
				keep, strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", ", "), strings.Join(dirs, ", "))
		}
		if err == nil {
			db, err := sqlite.Open(ctx, filepath.Join(keep, "data"))
			if err != nil {
				return nil, nil, err
			}
			return db, func() { db.Close() }, nil
		}
	}
	db, done, err := scratchDB(ctx, keep)
	if err != nil {
		return nil, nil, err
	}
	files, err := ingest.Files(dirs)
	if err != nil {
		done()
		return nil, nil, err
	}
	for _, r := range (&ingest.Importer{DB: db, Rules: cfg.Rules}).Import(ctx, files.Files) {
		if r.Err != nil {
			done()
			return nil, nil, r.Err
		}
	}
	if keep != "" {
		if err := os.WriteFile(filepath.Join(keep, "imported"), []byte(want), 0o600); err != nil {
			done()
			return nil, nil, err
		}
	}
	return db, done, nil
}

// scratchDB opens a new database in dir, or in a new temporary directory
// that done removes when dir is "".
func scratchDB(ctx context.Context, dir string) (*sqlite.DB, func(), error) {
	scratch := dir
	if dir == "" {
		var err error
		if scratch, err = os.MkdirTemp("", "dsearch-eval-"); err != nil {
			return nil, nil, err
		}
	}
	db, err := sqlite.Open(ctx, filepath.Join(scratch, "data"))
	if err != nil {
		if dir == "" {
			os.RemoveAll(scratch)
		}
		return nil, nil, err
	}
	return db, func() {
		db.Close()
		if dir == "" {
			os.RemoveAll(scratch)
		}
	}, nil
}

// scratchImportOrdered is scratchImport of one export with the messages
// arriving in another order than the files': "backfill" as the bot sends
// history (pages of up to 100, newest page first), "shuffle" at random in
// batches of up to 100; "import" is the files' order.
func scratchImportOrdered(ctx context.Context, cfg *Config, export, order string) (*sqlite.DB, func(), error) {
	if order == "import" {
		return scratchImport(ctx, cfg, []string{export}, "")
	}
	db, done, err := scratchDB(ctx, "")
	if err != nil {
		return nil, nil, err
	}
	listing, err := ingest.Files([]string{export})
	if err == nil {
		err = importOrdered(ctx, db, cfg, listing.Files, order)
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	return db, done, nil
}

func importOrdered(ctx context.Context, db *sqlite.DB, cfg *Config, files []string, order string) error {
	var batches []searchd.Batch
	rng := rand.New(rand.NewPCG(1, 1))
	for _, path := range files {
		x, msgs, err := export.ReadFile(path)
		if err != nil {
			return err
		}
		places := searchd.Batch{Guilds: []searchd.Guild{x.Guild}, Channels: []searchd.Channel{x.Channel}}
		if x.Parent != nil {
			places.Channels = append(places.Channels, *x.Parent)
		}
		batches = append(batches, places)
		switch order {
		case "backfill":
			for end := len(msgs); end > 0; end -= 100 {
				batches = append(batches, searchd.Batch{Messages: msgs[max(0, end-100):end]})
			}
		case "shuffle":
			rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })
			for i := 0; i < len(msgs); i += 100 {
				batches = append(batches, searchd.Batch{Messages: msgs[i:min(i+100, len(msgs))]})
			}
		default:
			return fmt.Errorf("--order %q: want import, backfill or shuffle", order)
		}
	}
	for i := range batches {
		if _, err := db.Apply(ctx, &batches[i], cfg.Rules, nil); err != nil {
			return err
		}
	}
	return nil
}

type goldConversation struct {
	ChannelID string   `json:"channel_id"`
	Messages  []string `json:"messages"`
}

// evalSegments imports an export into a scratch database, segments it
// with the configured rules, and scores the segments of the gold
// messages against the gold conversations.
func (m *Main) evalSegments(ctx context.Context, cfg *Config, exportPath, goldFile, dump, order string) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	f, err := os.Open(goldFile)
	if err != nil {
		return err
	}
	defer f.Close()
	gold := map[int64]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for n := int64(1); sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var g goldConversation
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			return fmt.Errorf("%s:%d: %w", goldFile, n, err)
		}
		for _, s := range g.Messages {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return fmt.Errorf("%s:%d: message id %q", goldFile, n, s)
			}
			gold[id] = n
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	db, done, err := scratchImportOrdered(ctx, cfg, exportPath, order)
	if err != nil {
		return err
	}
	defer done()
	ids := make([]int64, 0, len(gold))
	for id := range gold {
		ids = append(ids, id)
	}
	guess, err := db.SegmentsOf(ctx, ids)
	if err != nil {
		return err
	}
	if len(guess) < len(gold) {
		fmt.Fprintf(m.Stderr, "warning: %d gold messages are not in the export\n", len(gold)-len(guess))
	}
	s := segeval.Score(gold, guess)
	fmt.Fprintf(m.Stdout, "segmenter %s over %d gold messages (%d gold conversations of 2+, %d guessed)\n",
		cfg.Rules.Name(), s.Messages, s.Gold, s.Guessed)
	fmt.Fprintf(m.Stdout, "1-VI %.1f  1-1 %.1f  P %.1f  R %.1f  F %.1f\n", s.OneMinusVI, s.OneToOne, s.P, s.R, s.F)
	if dump == "" {
		return nil
	}
	out, err := os.Create(dump)
	if err != nil {
		return err
	}
	defer out.Close()
	w := bufio.NewWriter(out)
	err = db.EachSegmentMembers(ctx, func(seg int64, msgs []int64) error {
		strs := make([]string, len(msgs))
		for i, id := range msgs {
			strs[i] = strconv.FormatInt(id, 10)
		}
		b, _ := json.Marshal(map[string]any{"segment_id": seg, "messages": strs})
		_, err := w.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return err
	}
	return w.Flush()
}
