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
	listing, unreadable := ingest.Files(paths)
	files := listing.Files
	if unreadable != nil {
		fmt.Fprintf(m.Stderr, "error: %v\n", strings.ReplaceAll(unreadable.Error(), "\n", "\nerror: "))
	}
	if n := otherExports(listing.Other); n != "" {
		fmt.Fprintf(m.Stderr, "skipped files not in JSON (%s): only JSON exports can be imported (DiscordChatExporter --format Json); unzip a zip first\n", n)
	}
	if len(files) == 0 {
		if unreadable != nil {
			return errors.New("import: nothing readable to import")
		}
		return fmt.Errorf("import: no .json files in %s", strings.Join(paths, ", "))
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
	var failed, resumable, unfinished, skipped, refused int
	var inserted, updated int
	for _, r := range results {
		switch {
		case r.Err != nil && interrupted && errors.Is(r.Err, ctx.Err()):
			unfinished++
		case r.Err != nil:
			failed++
			if r.Resumable() {
				resumable++
			}
			fmt.Fprintf(m.Stderr, "error: %v\n", r.Err)
		case r.NotExport:
			skipped++
			fmt.Fprintf(m.Stdout, "%s: skipped, not a DiscordChatExporter export\n", r.Path)
		case r.UnchangedFile:
			fmt.Fprintf(m.Stdout, "%s: already imported, unchanged\n", r.Path)
		default:
			m.printFileResult(&r)
		}
		inserted += r.Inserted
		updated += r.Updated
		refused += r.Conflicts
	}
	imported := len(files) - failed - unfinished - skipped
	summary := fmt.Sprintf("imported %d new and %d updated messages from %s in %s (%.0f new/s), peak memory %d MiB",
		inserted, updated, plural(imported, "file", "files"), elapsed.Round(time.Millisecond),
		float64(inserted)/elapsed.Seconds(), peakRSS()>>20)
	if skipped > 0 {
		summary += fmt.Sprintf("; %s skipped, not exports", plural(skipped, "file", "files"))
	}
	if refused > 0 {
		summary += fmt.Sprintf("; %s refused, their IDs already stored in another channel", plural(refused, "message", "messages"))
	}
	fmt.Fprintln(m.Stdout, summary)
	switch {
	case interrupted:
		return fmt.Errorf("import interrupted with %d of %d files unfinished; run it again to resume where it stopped", unfinished, len(files))
	case resumable > 0:
		return fmt.Errorf("%d of %d files failed; the rest were imported, and a rerun resumes the failed ones", failed, len(files))
	case failed > 0:
		return fmt.Errorf("%d of %d files could not be imported (above); the rest were imported", failed, len(files))
	case refused > 0:
		return fmt.Errorf("%s refused (IDs above): an export that gives a message of one channel to another is broken; the stored copies were kept", plural(refused, "message was", "messages were"))
	case unreadable != nil:
		return errors.New("some paths could not be read (above); everything else was imported")
	case skipped == len(files):
		// Nothing was an export: a stray file beside exports is skipped,
		// but a user who named only such files imported nothing.
		return errors.New("import: no file is a DiscordChatExporter export: export the channels with DiscordChatExporter in JSON (--format Json) and import those; Discord's own data package (messages/c…/messages.json) is not one")
	}
	return nil
}

// printFileResult prints what importing one file did.
func (m *Main) printFileResult(r *ingest.FileResult) {
	var extra []string
	if r.Resumed > 0 {
		extra = append(extra, fmt.Sprintf("resumed after %d", r.Resumed))
	}
	if r.Skipped > 0 {
		// Tombstones: messages deleted (in Discord, or by `forget`) after
		// an earlier import or sync are not brought back by an old export;
		// nor are opted-out members', deleted channels', or a server's the
		// bot was removed from.
		extra = append(extra, fmt.Sprintf("%d removed since an earlier import or sync (deleted, opted out, or of a server the bot left), not brought back", r.Skipped))
	}
	if r.Truncated > 0 {
		extra = append(extra, fmt.Sprintf("%d over the size limits kept cut (docs/operations.md)", r.Truncated))
	}
	if r.Invalid > 0 {
		extra = append(extra, fmt.Sprintf("%s passed over, unreadable (the first: %v)", plural(int(r.Invalid), "message", "messages"), r.FirstInvalid))
	}
	line := fmt.Sprintf("%s: %d new, %d updated, %d unchanged", r.Path, r.Inserted, r.Updated, r.Unchanged)
	if len(extra) > 0 {
		line += ", " + strings.Join(extra, ", ")
	}
	fmt.Fprintln(m.Stdout, line)
	if r.CountMismatch() {
		fmt.Fprintf(m.Stderr, "warning: %s: the export says it holds %d messages but %d were read: it may be cut short or edited; export the channel again to be sure\n",
			r.Path, r.Count, r.Read)
	}
	if r.NotInExport > 0 {
		// An import never deletes: a filter the JSON does not record
		// would look the same, and a wrong deletion is for good.
		verb := "are"
		if r.NotInExport == 1 {
			verb = "is"
		}
		fmt.Fprintf(m.Stderr, "warning: %s: %s stored of #%s %s not in this full export: deleted on Discord? An import never deletes; `dsearch-bot --reconcile` removes what Discord no longer has (docs/operations.md)\n",
			r.Path, plural(int(r.NotInExport), "message", "messages"), r.Channel.Name, verb)
	}
	if r.Conflicts > 0 {
		fmt.Fprintf(m.Stderr, "%s: %s refused, their IDs already stored in another channel (kept there): %v\n",
			r.Path, plural(r.Conflicts, "message", "messages"), r.ConflictIDs)
	}
}

// otherExports describes the exports in other formats a listing saw, or
// is empty.
func otherExports(by map[string]int) string {
	var parts []string
	for _, ext := range []string{".html", ".htm", ".csv", ".zip"} {
		if n := by[ext]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, ext))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ")
}

// plural is "1 file" or "2 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// fileProgress adds up progress within files into one byte count. Files
// of different channels are read side by side (ingest.Import).
type fileProgress struct {
	*progress
	read map[string]int64 // bytes read, by file
	sum  int64
}

// file records progress within one file; read == size means it ended.
func (p *fileProgress) file(name string, read, size int64) {
	if p.read == nil {
		p.read = map[string]int64{}
	}
	p.sum += read - p.read[name]
	p.read[name] = read
	p.set(p.sum)
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
