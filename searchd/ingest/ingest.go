// Package ingest imports DiscordChatExporter exports into the database:
// streaming, in batched transactions, resumable, and idempotent.
package ingest

import (
	"context"
	"errors"
	"fmt"
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
	// Invalid is the messages passed over as unreadable (a timestamp or an
	// ID the exporter would not write), the first in FirstInvalid.
	Invalid      int64
	FirstInvalid error
	// Channel is the export's channel. NotInExport counts, for an export
	// without a date range, the stored messages of the channel from
	// before it was exported that it does not hold (deleted on Discord
	// since?): an import never deletes.
	Channel     searchd.Channel
	NotInExport int64
	searchd.BatchResult
	Err error
}

// CountMismatch reports whether the export's messageCount disagrees with
// the messages read from it.
func (r *FileResult) CountMismatch() bool {
	return r.Err == nil && !r.UnchangedFile && !r.NotExport && r.Count >= 0 && r.Count != r.Read+r.Invalid
}

// Resumable reports whether a rerun may get further with the file: not
// for a file that is in another format, which only a new export fixes. A
// file cut short resumes from what was imported once exported again.
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
			if !fi.Mode().IsRegular() {
				errs = append(errs, notAFile(p))
				continue
			}
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
				// A named pipe, a socket or a device would block the
				// import's open for good: regular files only (or links
				// to them).
				if fi, err := os.Stat(path); err != nil {
					errs = append(errs, err)
				} else if !fi.Mode().IsRegular() {
					errs = append(errs, notAFile(path))
				} else {
					out = append(out, path)
				}
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

func notAFile(path string) error {
	return fmt.Errorf("%s: not a regular file (a named pipe, a socket or a device?); skipped", path)
}

// walkDir is filepath.WalkDir; tests make directories unreadable with it
// (chmod cannot, for root).
var walkDir = filepath.WalkDir

// Import imports the files oldest export first (ByExportTime), so that
// where two exports hold the same message, the newer one's text and names
// are what stays. Files of different channels are read side by side and
// written merged in time order (merge.go); two exports of one channel
// never are, the older finishing first. A malformed file does not stop the
// others; its error is in its result.
func (im *Importer) Import(ctx context.Context, files []string) []FileResult {
	ordered := ByExportTime(files)
	out := make([]FileResult, len(ordered))
	var group []*source
	channels := map[int64]bool{}
	run := func() {
		im.run(ctx, group)
		group = nil
		clear(channels)
	}
	for i, path := range ordered {
		s := im.open(ctx, path, &out[i])
		if s == nil {
			continue
		}
		if len(group) == maxSideBySide || channels[s.x.Channel.ID] {
			run() // before its state is read: the group may hold this very file
		}
		if !im.begin(ctx, s) {
			continue
		}
		group = append(group, s)
		channels[s.x.Channel.ID] = true
	}
	run()
	return out
}

// ImportFile imports one export. Each batch commits with the file's
// progress, so a crash loses at most the batch being read, and a rerun
// resumes after the last committed message. A finished file that has not
// changed since is skipped.
func (im *Importer) ImportFile(ctx context.Context, path string) FileResult {
	var res FileResult
	if s := im.open(ctx, path, &res); s != nil && im.begin(ctx, s) {
		im.run(ctx, []*source{s})
	}
	return res
}

// open opens an export and reads its header. It returns nil when the
// file's result is already final: an error, or not an export.
func (im *Importer) open(ctx context.Context, path string, res *FileResult) *source {
	res.Path = path
	if err := ctx.Err(); err != nil {
		res.Err = err
		return nil
	}
	s := &source{res: res}
	err := s.open(path)
	if errors.Is(err, export.ErrNotExport) {
		res.NotExport = true
		im.progress(path, s.cp.Size, s.cp.Size)
		return nil
	}
	if err != nil {
		res.Err = fmt.Errorf("%s: %w", path, err)
		return nil
	}
	res.Channel = s.x.Channel
	return s
}

// begin reads where an earlier import of the file stopped: it resumes
// there if the file is as it was, and reports false (and closes it) when
// the file was imported whole and has not changed, or on an error.
func (im *Importer) begin(ctx context.Context, s *source) bool {
	prev, err := im.DB.ImportState(ctx, s.cp.Path)
	if err != nil {
		s.res.Err = fmt.Errorf("%s: %w", s.res.Path, err)
		s.f.Close()
		return false
	}
	if prev != nil && prev.Size == s.cp.Size && prev.MTime == s.cp.MTime {
		if prev.Complete {
			s.res.UnchangedFile = true
			im.progress(s.res.Path, s.cp.Size, s.cp.Size)
			s.f.Close()
			return false
		}
		s.skip = prev.MessagesDone // the file is as it was: resume
		s.res.Resumed = s.skip
	}
	return true
}

func (im *Importer) progress(file string, read, size int64) {
	if im.Progress != nil {
		im.Progress(file, read, size)
	}
}
