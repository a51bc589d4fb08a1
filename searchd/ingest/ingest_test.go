package ingest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dsearch/searchd/export"
	"dsearch/searchd/internal/sample"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
)

func newImporter(t *testing.T) *Importer {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &Importer{DB: db, Rules: segment.DefaultRules}
}

func writeSample(t *testing.T) []string {
	t.Helper()
	paths, err := sample.WriteSample(filepath.Join(t.TempDir(), "sample"))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func stats(t *testing.T, im *Importer) *sqlite.Stats {
	t.Helper()
	st, err := im.DB.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestImportSampleTwice(t *testing.T) {
	im := newImporter(t)
	paths := writeSample(t)
	ctx := context.Background()
	for _, r := range im.Import(ctx, paths) {
		if r.Err != nil || r.Inserted == 0 {
			t.Fatalf("%s: %+v", r.Path, r)
		}
	}
	first := stats(t, im)
	if first.Messages != 42 || first.Channels != 3 || // general, games and a thread; not the category
		first.Users != 4 || first.OverlappingSegments != 1 {
		t.Errorf("sample stats: %+v", first)
	}
	// An unchanged file is skipped; a touched one is re-read and changes
	// nothing.
	for _, r := range im.Import(ctx, paths) {
		if r.Err != nil || !r.UnchangedFile {
			t.Errorf("second import of %s: %+v", r.Path, r)
		}
	}
	if err := os.Chtimes(paths[0], modTime(t, paths[0]), modTime(t, paths[0]).Add(1e9)); err != nil {
		t.Fatal(err)
	}
	r := im.ImportFile(ctx, paths[0])
	if r.Err != nil || r.UnchangedFile || r.Inserted != 0 || r.Updated != 0 || r.Unchanged == 0 {
		t.Errorf("reimport of a touched file: %+v", r)
	}
	if again := stats(t, im); again.Messages != first.Messages || again.Segments != first.Segments {
		t.Errorf("reimport changed the data: %+v → %+v", first, again)
	}
}

func modTime(t *testing.T, path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

func TestTruncatedExport(t *testing.T) {
	im := newImporter(t)
	im.BatchSize = 3 // so the cut falls inside a batch
	paths := writeSample(t)
	ctx := context.Background()
	// Cut the general channel's export in the middle of a message.
	var general string
	for _, p := range paths {
		if strings.Contains(p, "general") {
			general = p
		}
	}
	b, err := os.ReadFile(general)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Index(string(b), "이삿짐 센터는")
	if cut < 0 {
		t.Fatal("sample changed: marker not found")
	}
	whole := int64(strings.Count(string(b[:cut]), `"timestamp":"`) - 1) // messages before the cut one
	committed := whole - whole%int64(im.BatchSize)
	if err := os.WriteFile(general, b[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	results := im.Import(ctx, paths)
	var failed int
	for _, r := range results {
		if r.Path == general {
			failed++
			var xe *export.Error
			if !errors.As(r.Err, &xe) || !strings.Contains(r.Err.Error(), general) || !strings.Contains(r.Err.Error(), "at byte") {
				t.Errorf("error %v should name the file and the byte offset", r.Err)
			}
			continue
		}
		if r.Err != nil {
			t.Errorf("%s failed too: %v", r.Path, r.Err)
		}
	}
	if failed != 1 {
		t.Fatalf("%d files failed", failed)
	}
	// Whole batches committed; the half-read batch left nothing.
	st := stats(t, im)
	if n := st.Messages - (9 + 4); n != committed || whole%int64(im.BatchSize) == 0 { // other channels: games 9, thread 4
		t.Errorf("%d messages of the truncated file were kept, want %d (the whole batches of %d read)", n, committed, whole)
	}
	cp, err := im.DB.ImportState(ctx, mustAbs(t, general))
	if err != nil || cp == nil || cp.Complete || cp.MessagesDone != committed {
		t.Errorf("checkpoint %+v, %v", cp, err)
	}
}

// An import killed after some batches resumes after the last committed
// message, and ends with exactly what one uninterrupted import gives.
func TestResume(t *testing.T) {
	paths := writeSample(t)
	var general string
	for _, p := range paths {
		if strings.Contains(p, "general") {
			general = p
		}
	}
	whole := newImporter(t)
	if r := whole.ImportFile(context.Background(), general); r.Err != nil {
		t.Fatal(r.Err)
	}

	im := newImporter(t)
	im.BatchSize = 5
	ctx, cancel := context.WithCancel(context.Background())
	batches := 0
	im.Progress = func(string, int64, int64) {
		if batches++; batches == 2 {
			cancel() // "crash" after two committed batches
		}
	}
	if r := im.ImportFile(ctx, general); !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("interrupted import: %+v", r)
	}
	if n := stats(t, im).Messages; n != 10 {
		t.Fatalf("%d messages after two batches, want 10", n)
	}
	im.Progress = nil
	r := im.ImportFile(context.Background(), general)
	if r.Err != nil || r.Resumed != 10 || r.Inserted != 29-10 || r.Unchanged != 0 {
		t.Fatalf("resumed import: %+v", r)
	}
	a, b := stats(t, whole), stats(t, im)
	if a.Messages != b.Messages || a.Segments != b.Segments || a.OverlappingSegments != b.OverlappingSegments {
		t.Errorf("resumed import differs: whole %+v, resumed %+v", a, b)
	}
}

// The evaluation sets are real conversations in the export format.
func TestImportEvalData(t *testing.T) {
	for _, dir := range []string{"locomo-dev", "irc-dev"} {
		t.Run(dir, func(t *testing.T) {
			path := filepath.Join("..", "..", "..", "shared", "eval", dir)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("evaluation data not present: %v", err)
			}
			listing, err := Files([]string{path})
			files := listing.Files
			if err != nil {
				t.Fatal(err)
			}
			im := newImporter(t)
			var jsonFiles int
			for _, r := range im.Import(context.Background(), files) {
				if strings.HasSuffix(r.Path, ".json") {
					jsonFiles++
				}
				if r.Err != nil {
					t.Errorf("%s: %v", r.Path, r.Err)
				}
			}
			st := stats(t, im)
			if st.Messages < 1000 || st.Segments == 0 || int64(len(st.Gaps)) != st.Messages-st.Channels {
				t.Errorf("stats: %d messages, %d segments, %d gaps, %d channels", st.Messages, st.Segments, len(st.Gaps), st.Channels)
			}
			med := sqlite.Quantile(st.Gaps, 0.5)
			if med <= 0 || med > 3600e6 {
				t.Errorf("median gap %d µs is not sane for chat", med)
			}
		})
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A subdirectory that cannot be read is reported, and the files of every
// other directory are still listed.
func TestFilesSkipsUnreadableDirectory(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/1.json", "b/2.json", "b/deeper/3.json", "c/4.json"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o700)
		os.WriteFile(filepath.Join(root, p), []byte("{}"), 0o600)
	}
	bad := filepath.Join(root, "b")
	// As WalkDir does when ReadDir fails: the directory, then its error.
	walkDir = func(p string, fn fs.WalkDirFunc) error {
		return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if path == bad && err == nil {
				if err := fn(path, d, nil); err != nil {
					return err
				}
				if err := fn(path, d, &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}); err != nil {
					return err
				}
				return filepath.SkipDir
			}
			return fn(path, d, err)
		})
	}
	t.Cleanup(func() { walkDir = filepath.WalkDir })
	listing, err := Files([]string{root, filepath.Join(root, "missing")})
	files := listing.Files
	want := []string{filepath.Join(root, "a/1.json"), filepath.Join(root, "c/4.json")}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v", files, want)
	}
	if err == nil || !strings.Contains(err.Error(), bad+": permission denied") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("err = %v, want it to name %s and the missing path", err, bad)
	}
}
