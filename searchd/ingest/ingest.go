// Package ingest imports DiscordChatExporter exports into the database:
// streaming, in batched transactions, resumable, and idempotent.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"dsearch/searchd"
	"dsearch/searchd/export"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

// DefaultBatchSize is the number of messages per transaction: large enough
// that commits are cheap, small enough that a crash loses little.
const DefaultBatchSize = 5000

// Importer imports export files.
type Importer struct {
	DB        *sqlite.DB
	Rules     segment.Rules
	BatchSize int
	// Progress, if set, is told the bytes read of the current file after
	// each batch and when a file ends.
	Progress func(file string, read, size int64)
}

// FileResult is what importing one file did.
type FileResult struct {
	Path          string
	UnchangedFile bool // imported before and unchanged since: skipped
	// NotExport: JSON that is not an export (an attachment the exporter
	// downloaded, a config file): skipped, nothing written.
	NotExport bool
	Resumed   int64
	// Read is the messages the file held; Count what its messageCount
	// says it holds (-1: it does not say). They differ in an export cut
	// short or written by another tool.
	Read, Count int64
	searchd.BatchResult
	Err error
}

// CountMismatch reports whether the export's messageCount disagrees with
// the messages read from it.
func (r *FileResult) CountMismatch() bool {
	return r.Err == nil && !r.UnchangedFile && !r.NotExport && r.Count >= 0 && r.Count != r.Read
}

// Resumable reports whether a rerun may get further with the file: not
// for a file that is in another format, which only a new export fixes.
func (r *FileResult) Resumable() bool {
	var fe *export.FormatError
	return r.Err != nil && !errors.As(r.Err, &fe)
}

// Listing is what Files found.
type Listing struct {
	Files []string // the *.json files, sorted
	// Other counts the exports in the exporter's other formats (HTML, CSV,
	// plain text, zip) seen in directories, by extension, which cannot be
	// imported as they are.
	Other map[string]int
}

// Files expands paths (files, or directories searched for *.json) into a
// sorted list of export files. It does not descend into the exporter's
// asset folders (…_Files, where "download assets" puts attachments, some
// of them JSON). A path or subdirectory it cannot read does not hide the
// rest: it lists every file it can, and the error, when not nil, names
// each path it could not read.
func Files(paths []string) (Listing, error) {
	var out []string
	other := map[string]int{}
	var errs []error
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		err = walkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				errs = append(errs, err)
				return nil // WalkDir skips what it could not read
			}
			name := strings.ToLower(d.Name())
			switch {
			case d.IsDir() && path != p && strings.HasSuffix(name, "_files"):
				return filepath.SkipDir // the exporter's downloaded assets
			case d.IsDir():
			case strings.HasSuffix(name, ".json"):
				out = append(out, path)
			case strings.HasSuffix(name, ".html") || strings.HasSuffix(name, ".htm") || strings.HasSuffix(name, ".csv") ||
				strings.HasSuffix(name, ".zip"):
				other[filepath.Ext(name)]++
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	sort.Strings(out)
	return Listing{Files: out, Other: other}, errors.Join(errs...)
}

// walkDir is filepath.WalkDir; tests make directories unreadable with it
// (chmod cannot, for root).
var walkDir = filepath.WalkDir

// Import imports each file in turn, oldest export first (ByExportTime), so
// that where two exports hold the same message, the newer one's text and
// names are what stays. A malformed file does not stop the others; its
// error is in its result.
func (im *Importer) Import(ctx context.Context, files []string) []FileResult {
	var out []FileResult
	for _, f := range ByExportTime(files) {
		if ctx.Err() != nil {
			out = append(out, FileResult{Path: f, Err: ctx.Err()})
			continue
		}
		out = append(out, im.ImportFile(ctx, f))
	}
	return out
}

// ImportFile imports one export. Each batch commits with the file's
// progress, so a crash loses at most the batch being read, and a rerun
// resumes after the last committed message. A finished file that has not
// changed since is skipped.
func (im *Importer) ImportFile(ctx context.Context, path string) (res FileResult) {
	res.Path = path
	abs, err := filepath.Abs(path)
	if err != nil {
		res.Err = err
		return res
	}
	f, err := os.Open(abs)
	if err != nil {
		res.Err = err
		return res
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		res.Err = err
		return res
	}
	cp := sqlite.Checkpoint{Path: abs, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	prev, err := im.DB.ImportState(ctx, abs)
	if err != nil {
		res.Err = err
		return res
	}
	var skip int64
	if prev != nil && prev.Size == cp.Size && prev.MTime == cp.MTime {
		if prev.Complete {
			res.UnchangedFile = true
			im.progress(path, cp.Size, cp.Size)
			return res
		}
		skip = prev.MessagesDone // the file is as it was: resume
		res.Resumed = skip
	}
	res.Err = im.read(ctx, f, &cp, skip, &res)
	if errors.Is(res.Err, export.ErrNotExport) {
		res.Err, res.NotExport = nil, true
		im.progress(path, cp.Size, cp.Size)
	}
	if res.Err != nil {
		res.Err = fmt.Errorf("%s: %w", path, res.Err)
	}
	return res
}

func (im *Importer) read(ctx context.Context, f *os.File, cp *sqlite.Checkpoint, skip int64, res *FileResult) error {
	total := &res.BatchResult
	x, err := export.NewReader(f)
	if err != nil {
		return err
	}
	size := cp.Size
	cp.Channel, cp.ExportedAt = x.Channel.ID, x.ExportedAt
	if cp.ExportedAt == 0 {
		cp.ExportedAt = cp.MTime / 1000 // an older exporter's file: its time (ByExportTime)
	}
	n := max(im.BatchSize, 1)
	if im.BatchSize == 0 {
		n = DefaultBatchSize
	}
	// The next batch is decoded while this one is written: decoding is
	// about a seventh of an import's CPU, and the writer cannot share its
	// work. Stopping (an error, or ctx) waits for the decoder, so the
	// file is not read after read returns.
	ctx, stop := context.WithCancel(ctx)
	batches := make(chan decoded, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		decode(ctx, x, n, skip, batches)
	}()
	defer func() {
		stop()
		<-done
	}()
	for d := range batches {
		if d.err != nil {
			// Nothing of the half-read batch is written; what was
			// committed before stays, and a rerun resumes from it.
			return d.err
		}
		cp.MessagesDone, cp.Complete = d.read, d.end
		r, err := im.DB.Apply(ctx, &d.batch, im.Rules, cp)
		if err != nil {
			return err
		}
		total.Add(r)
		if d.end {
			res.Read, res.Count = d.read, x.Count
			im.progress(f.Name(), size, size)
			return nil
		}
		im.progress(f.Name(), min(d.offset, size-1), size)
	}
	return ctx.Err() // stopped before it could say so
}

// decoded is a batch of an export, or why reading it stopped.
type decoded struct {
	batch  searchd.Batch
	read   int64 // messages decoded up to the batch's end, skipped included
	offset int64 // bytes read up to the batch's end
	end    bool  // the export's last batch (x.Count is then set)
	err    error
}

// decode reads x's messages after the first skip into batches of n and
// sends them; the last one it sends ends the export or carries the error
// that stopped it (ctx's included).
func decode(ctx context.Context, x *export.Reader, n int, skip int64, out chan<- decoded) {
	defer close(out)
	places := func() searchd.Batch {
		b := searchd.Batch{Guilds: []searchd.Guild{x.Guild}}
		if x.Parent != nil {
			b.Channels = append(b.Channels, *x.Parent)
		}
		b.Channels = append(b.Channels, x.Channel)
		return b
	}
	send := func(d decoded) bool {
		select {
		case out <- d:
			return true
		case <-ctx.Done():
			return false
		}
	}
	batch := places()
	var read int64
	for {
		if err := ctx.Err(); err != nil {
			send(decoded{err: err})
			return
		}
		m, err := x.Next()
		if err != nil && !errors.Is(err, io.EOF) {
			send(decoded{err: err})
			return
		}
		end := errors.Is(err, io.EOF)
		if !end {
			read++
			if read <= skip {
				continue
			}
			batch.Messages = append(batch.Messages, m)
			if len(batch.Messages) < n {
				continue
			}
		}
		if !send(decoded{batch: batch, read: read, offset: x.Offset(), end: end}) || end {
			return
		}
		batch = places()
	}
}

func (im *Importer) progress(file string, read, size int64) {
	if im.Progress != nil {
		im.Progress(file, read, size)
	}
}
