package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"dsearch/searchd/ingest"
	"dsearch/searchd/sqlite"
)

func (m *Main) importCmd() *ffcli.Command {
	var cfg Config
	return command("import", "PATH...", "import DiscordChatExporter JSON exports (files or directories)", &cfg, nil,
		func(ctx context.Context, args []string) error { return m.importPaths(ctx, &cfg, args) })
}

func (m *Main) importPaths(ctx context.Context, cfg *Config, paths []string) error {
	if len(paths) == 0 {
		return errors.New("import: name at least one export file or directory")
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	if m.Yield != nil {
		m.Yield()
	}
	// A path it cannot read is reported, and everything else imported.
	files, unreadable := ingest.Files(paths)
	if unreadable != nil {
		fmt.Fprintf(m.Stderr, "error: %v\n", strings.ReplaceAll(unreadable.Error(), "\n", "\nerror: "))
	}
	if len(files) == 0 {
		if unreadable != nil {
			return errors.New("import: nothing readable to import")
		}
		return fmt.Errorf("import: no .json files in %v", paths)
	}
	var total int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			total += fi.Size()
		}
	}
	db, err := sqlite.Open(ctx, cfg.Data)
	if err != nil {
		return err
	}
	defer db.Close()

	bar := &fileProgress{progress: newProgress(m.Stderr, "importing", total, true)}
	im := &ingest.Importer{DB: db, Rules: cfg.Rules, Progress: bar.file}
	start := time.Now()
	results := im.Import(ctx, files)
	bar.finish()
	elapsed := time.Since(start)

	// Interrupted (Ctrl-C): the files it did not finish are not failures.
	interrupted := ctx.Err() != nil
	var failed, unfinished int
	var inserted, updated int
	for _, r := range results {
		switch {
		case r.Err != nil && interrupted && errors.Is(r.Err, ctx.Err()):
			unfinished++
		case r.Err != nil:
			failed++
			fmt.Fprintf(m.Stderr, "error: %v\n", r.Err)
		case r.UnchangedFile:
			fmt.Fprintf(m.Stdout, "%s: already imported, unchanged\n", r.Path)
		default:
			resumed := ""
			if r.Resumed > 0 {
				resumed = fmt.Sprintf(", resumed after %d", r.Resumed)
			}
			truncated := ""
			if r.Truncated > 0 {
				truncated = fmt.Sprintf(", %d over the size limits kept cut (docs/operations.md)", r.Truncated)
			}
			fmt.Fprintf(m.Stdout, "%s: %d new, %d updated, %d unchanged, %d deleted earlier%s%s\n",
				r.Path, r.Inserted, r.Updated, r.Unchanged, r.Skipped, resumed, truncated)
			if r.Conflicts > 0 {
				fmt.Fprintf(m.Stdout, "%s: %d messages refused, their IDs already stored in another channel (kept there): %v\n",
					r.Path, r.Conflicts, r.ConflictIDs)
			}
		}
		inserted += r.Inserted
		updated += r.Updated
	}
	fmt.Fprintf(m.Stdout, "imported %d new and %d updated messages from %d files in %s (%.0f new/s), peak memory %d MiB\n",
		inserted, updated, len(files)-failed-unfinished, elapsed.Round(time.Millisecond),
		float64(inserted)/elapsed.Seconds(), peakRSS()>>20)
	switch {
	case interrupted:
		return fmt.Errorf("import interrupted with %d of %d files unfinished; run it again to resume where it stopped", unfinished, len(files))
	case failed > 0:
		return fmt.Errorf("%d of %d files failed; the rest were imported, and a rerun resumes the failed ones", failed, len(files))
	case unreadable != nil:
		return errors.New("some paths could not be read (above); everything else was imported")
	}
	return nil
}

// fileProgress adds up progress within files into one byte count.
type fileProgress struct {
	*progress
	done int64 // bytes of finished files
}

// file records progress within one file; read == size means it ended.
func (p *fileProgress) file(name string, read, size int64) {
	at := p.done + read
	if read >= size {
		p.done += size
	}
	p.set(at)
}

// peakRSS is the process's peak resident memory in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes
	}
	return int64(ru.Maxrss) << 10 // KiB on Linux
}
