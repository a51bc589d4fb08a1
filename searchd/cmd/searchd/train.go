package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"dsearch/searchd/segment/linktrain"
)

func (m *Main) trainCmd() *ffcli.Command {
	var cfg Config
	var exportDir, devDir, out string
	o := linktrain.DefaultOptions
	linker := command("linker", "--export DIR [--dev DIR] [--out FILE] [flags]",
		"train the reply-link model on exports with human reply links (links.jsonl) and write its weights", &cfg,
		func(fs *flag.FlagSet) {
			fs.StringVar(&exportDir, "export", "", "training exports and their links.jsonl (the unpacked irc-train)")
			fs.StringVar(&devDir, "dev", "", "development exports and links.jsonl: score the model there and choose its new-conversation offset (irc-dev)")
			fs.StringVar(&out, "out", "", "write the weights here (searchd/segment/linker.json is the shipped model)")
			fs.IntVar(&o.Window, "window", o.Window, "candidates: the most recent spoken lines a message may link to")
			fs.Float64Var(&o.Horizon, "horizon", o.Horizon, "candidates: at most this many seconds back")
			fs.IntVar(&o.Epochs, "epochs", o.Epochs, "passes over the training data")
			fs.IntVar(&o.Hidden, "hidden", o.Hidden, "units of a hidden layer over the link features (0: linear)")
			fs.IntVar(&o.OwnFrom, "own-from", o.OwnFrom, "from this epoch on (0: never), candidates' conversations are the model's own, as at run time, not the gold ones")
			fs.Float64Var(&o.Rate, "rate", o.Rate, "Adam learning rate (divided by 1+epoch)")
			fs.Float64Var(&o.L2, "l2", o.L2, "weight decay")
		},
		func(ctx context.Context, _ []string) error {
			if exportDir == "" {
				return errors.New("train linker: --export is required")
			}
			start := time.Now()
			train, err := linktrain.Load(exportDir)
			if err != nil {
				return fmt.Errorf("train linker: %w", err)
			}
			var dev []linktrain.Channel
			if devDir != "" {
				if dev, err = linktrain.Load(devDir); err != nil {
					return fmt.Errorf("train linker: dev: %w", err)
				}
			}
			fmt.Fprintf(m.Stderr, "loaded %d training channels in %s\n", len(train), time.Since(start).Round(time.Millisecond))
			l := linktrain.Train(train, o)
			l.Note = linktrain.Note
			fmt.Fprintf(m.Stderr, "trained in %s\n", time.Since(start).Round(time.Millisecond))
			if dev != nil {
				for i, s := range linktrain.ChooseOffset(l, dev) {
					fmt.Fprintf(m.Stdout, "dev, new offset %+.2f: 1-VI %.1f  1-1 %.1f  P %.1f  R %.1f  F %.1f (%d messages, %d gold conversations of 2+, %d guessed)\n",
						linktrain.Offsets[i], s.OneMinusVI, s.OneToOne, s.P, s.R, s.F, s.Messages, s.Gold, s.Guessed)
				}
				fmt.Fprintf(m.Stdout, "chose new offset %+.2f (the best mean of 1-1 and F)\n", l.NewOffset)
			}
			b, err := json.MarshalIndent(l, "", "  ")
			if err != nil {
				return err
			}
			if out == "" {
				_, err = m.Stdout.Write(append(b, '\n'))
				return err
			}
			return os.WriteFile(out, append(b, '\n'), 0o644)
		})
	return &ffcli.Command{Name: "train", ShortUsage: "searchd train linker [flags]", ShortHelp: "train the models searchd ships",
		Subcommands: []*ffcli.Command{linker}, FlagSet: flag.NewFlagSet("searchd train", flag.ContinueOnError),
		Exec: func(context.Context, []string) error { return flag.ErrHelp }}
}
