package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"dsearch/searchd/internal/sample"
	"dsearch/searchd/sqlite"
)

// synthetic writes a server's export, a file per channel, whose channels
// talk over the same months.
func synthetic(t *testing.T, messages, channels int) []string {
	t.Helper()
	paths, err := sample.WriteSynthetic(filepath.Join(t.TempDir(), "export"),
		sample.Synthetic{Messages: messages, Channels: channels, Users: 9, Seed: 7, ReplyRate: 0.08})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// partition is the database's segmentation as sets of message IDs,
// independent of segment row IDs.
func partition(t *testing.T, db *sqlite.DB) []string {
	t.Helper()
	var out []string
	err := db.EachSegmentMembers(context.Background(), func(_ int64, msgs []int64) error {
		slices.Sort(msgs)
		out = append(out, fmt.Sprint(msgs))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// keywordHits is what the database's keyword index finds for each word.
func keywordHits(t *testing.T, db *sqlite.DB, words []string) map[string][]int64 {
	t.Helper()
	out := map[string][]int64{}
	for _, w := range words {
		hits, err := db.Lexical(context.Background(), w, sqlite.Filter{}, 100000)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			out[w] = append(out[w], h.MessageID)
		}
		slices.Sort(out[w])
	}
	return out
}

// sameDatabase fails unless two imports stored the same messages, in the
// same conversations, found by the same keywords.
func sameDatabase(t *testing.T, want, got *Importer) {
	t.Helper()
	a, b := stats(t, want), stats(t, got)
	if a.Messages == 0 || a.Messages != b.Messages || a.Segments != b.Segments || a.OverlappingSegments != b.OverlappingSegments {
		t.Errorf("stats differ: want %+v, got %+v", a, b)
	}
	if pa, pb := partition(t, want.DB), partition(t, got.DB); !slices.Equal(pa, pb) {
		t.Errorf("segmentations differ: %d against %d segments", len(pa), len(pb))
	}
	words := []string{"it", "no", "오늘", "내일"}
	ka, kb := keywordHits(t, want.DB, words), keywordHits(t, got.DB, words)
	for _, w := range words {
		if len(ka[w]) == 0 || !slices.Equal(ka[w], kb[w]) {
			t.Errorf("keyword %q: %d hits one file at a time, %d side by side", w, len(ka[w]), len(kb[w]))
		}
	}
}

// A server's files read side by side and merged in time order store what
// importing them one after another stores: the same conversations, the
// same keyword index, each file's count.
func TestMergedImportMatchesOneByOne(t *testing.T) {
	ctx := context.Background()
	paths := synthetic(t, 3000, 5)
	merged := newImporter(t)
	merged.BatchSize = 97
	var inserted int
	for _, r := range merged.Import(ctx, paths) {
		if r.Err != nil || r.Read != r.Count || r.Read == 0 {
			t.Fatalf("%s: %+v", r.Path, r)
		}
		inserted += r.Inserted
	}
	if inserted != 3000 {
		t.Fatalf("%d inserted, want 3000", inserted)
	}
	one := newImporter(t)
	one.BatchSize = 97
	for _, p := range ByExportTime(paths) {
		if r := one.ImportFile(ctx, p); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	sameDatabase(t, one, merged)
	for _, r := range merged.Import(ctx, paths) {
		if !r.UnchangedFile {
			t.Errorf("%s imported again: %+v", r.Path, r)
		}
	}
}

// Each batch takes the earliest messages not yet taken of every file, so
// the tables keyed by message ID grow at their end; the first batch has a
// part for every file, and each file's last part says it ended.
func TestMergeTakesTheEarliestMessages(t *testing.T) {
	ctx := context.Background()
	paths := synthetic(t, 1000, 4)
	im := newImporter(t)
	results := make([]FileResult, len(paths))
	var group []*source
	for i, p := range paths {
		s := im.open(ctx, p, &results[i])
		if s == nil || !im.begin(ctx, s) {
			t.Fatalf("%s: %+v", p, results[i])
		}
		defer s.f.Close()
		group = append(group, s)
	}
	batches := make(chan []*part)
	go merge(ctx, group, 60, batches)
	var last int64
	taken := map[*source]int64{}
	ended := map[*source]bool{}
	n := 0
	for batch := range batches {
		if n++; n == 1 && len(batch) != len(group) {
			t.Errorf("first batch has %d parts, want one for each of %d files", len(batch), len(group))
		}
		count := 0
		lo, hi := int64(1<<62), int64(0)
		for _, p := range batch {
			if ended[p.src] {
				t.Errorf("a part after the file's last")
			}
			if n == 1 && len(p.batch.Channels) == 0 {
				t.Errorf("first part without its channel")
			}
			for _, m := range p.batch.Messages {
				lo, hi = min(lo, m.ID), max(hi, m.ID)
			}
			count += len(p.batch.Messages)
			taken[p.src] += int64(len(p.batch.Messages))
			if p.taken != taken[p.src] {
				t.Errorf("part says %d messages taken, %d were", p.taken, taken[p.src])
			}
			ended[p.src] = p.end
		}
		if count > 60 {
			t.Errorf("batch of %d messages, at most 60", count)
		}
		if count > 0 && lo <= last {
			t.Errorf("batch %d starts at %d, not after the last batch's %d", n, lo, last)
		}
		last = max(last, hi)
	}
	var all int64
	for _, s := range group {
		if !ended[s] {
			t.Errorf("%s never ended", s.res.Path)
		}
		all += taken[s]
	}
	if all != 1000 || n < 1000/60 {
		t.Errorf("%d messages in %d batches", all, n)
	}
}

// An export cut short stops alone: the files read beside it are imported
// whole, and what it held up to its last committed batch stays, with the
// checkpoint a rerun resumes from.
func TestBrokenFileStopsAlone(t *testing.T) {
	ctx := context.Background()
	paths := synthetic(t, 1500, 3)
	b, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	cut := string(b[:len(b)*2/3])
	cut = cut[:strings.LastIndex(cut, `{"id"`)] + `{"id": "oops"` // a message that fails to decode
	write(t, paths[1], []byte(cut))
	im := newImporter(t)
	im.BatchSize = 50
	var stored int64
	for _, r := range im.Import(ctx, paths) {
		if r.Path == paths[1] {
			if r.Err == nil || !r.Resumable() {
				t.Fatalf("broken file: %+v", r)
			}
			continue
		}
		if r.Err != nil || r.Read != r.Count || r.Inserted != int(r.Count) {
			t.Errorf("%s: %+v", r.Path, r)
		}
		stored += r.Read
	}
	abs, _ := filepath.Abs(paths[1])
	cp, err := im.DB.ImportState(ctx, abs)
	if err != nil || cp == nil || cp.Complete || cp.MessagesDone == 0 {
		t.Fatalf("broken file's checkpoint %+v, %v", cp, err)
	}
	if n := stats(t, im).Messages; n != stored+cp.MessagesDone {
		t.Errorf("%d messages stored, want %d of the whole files and the %d the broken one's checkpoint counts", n, stored, cp.MessagesDone)
	}
}

// An import of several files killed after some batches resumes each file
// after its last committed message and ends with what one uninterrupted
// import gives.
func TestMergedImportResumes(t *testing.T) {
	paths := synthetic(t, 2000, 4)
	whole := newImporter(t)
	for _, r := range whole.Import(context.Background(), paths) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	im := newImporter(t)
	im.BatchSize = 70
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	im.Progress = func(string, int64, int64) {
		if calls++; calls == 9 {
			cancel() // "crash" in the third batch's parts
		}
	}
	for _, r := range im.Import(ctx, paths) {
		if r.Err == nil {
			t.Fatalf("%s: not interrupted: %+v", r.Path, r)
		}
	}
	im.Progress = nil
	resumed := 0
	for _, r := range im.Import(context.Background(), paths) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if r.Resumed > 0 {
			resumed++
		}
	}
	if resumed == 0 {
		t.Error("no file resumed")
	}
	sameDatabase(t, whole, im)
}

// Files read side by side leave the names the newest export gives, as
// when they were imported one after another: here the older export's
// channel talks on after the newer one's ends, so the last batches hold
// only the older file.
func TestMergedImportKeepsTheNewestNames(t *testing.T) {
	paths := synthetic(t, 600, 2)
	a, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	older := strings.Replace(string(a), `"name":"synthetic"`, `"name":"old name"`, 1)
	older = strings.Replace(older, `"exportedAt":"2026-11-30T00:00:00+09:00"`, `"exportedAt":"2025-01-01T00:00:00+09:00"`, 1)
	// The newer export ends at its first third: the older one's later
	// messages come alone.
	newer := string(b)
	cut := strings.Index(newer[len(newer)/3:], ",\n{\"id\"") + len(newer)/3
	newer = strings.Replace(newer[:cut], `"name":"synthetic"`, `"name":"new name"`, 1) + "\n]}"
	write(t, paths[0], []byte(older))
	write(t, paths[1], []byte(newer))
	im := newImporter(t)
	im.BatchSize = 40
	for _, r := range im.Import(context.Background(), paths) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	raw, err := sql.Open("sqlite", im.DB.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var name string
	if err := raw.QueryRow(`SELECT name FROM guilds WHERE id = 800000000000000001`).Scan(&name); err != nil || name != "new name" {
		t.Errorf("guild name %q, %v: want the newer export's", name, err)
	}
}
