package ingest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// realExport is testdata/dce-2.43.json of the export package: the current
// DiscordChatExporter's JSON.
func realExport(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "export", "testdata", "dce-2.43.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// An export made with "download assets" has a …_Files folder beside it,
// holding what people attached, JSON files among them.
func TestAssetFoldersAndStrayJSONSkipped(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "Study Group - general [880000000000000010].json"), realExport(t))
	write(t, filepath.Join(dir, "Study Group - general [880000000000000010].json_Files", "tsconfig-5F3A1.json"), []byte(`{"compilerOptions": {}}`))
	write(t, filepath.Join(dir, "notes.json"), []byte(`{"todo": ["export more"]}`))
	write(t, filepath.Join(dir, "Study Group - old.html"), []byte(`<!DOCTYPE html><html></html>`))
	listing, err := Files([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(listing.Files) != 2 || strings.Contains(strings.Join(listing.Files, " "), "_Files") {
		t.Errorf("files %v: want the export and notes.json, not the asset", listing.Files)
	}
	if listing.Other[".html"] != 1 {
		t.Errorf("other formats %v, want the HTML export counted", listing.Other)
	}
	im := newImporter(t)
	for _, r := range im.Import(context.Background(), listing.Files) {
		switch {
		case r.Err != nil:
			t.Errorf("%s: %v", r.Path, r.Err)
		case strings.HasSuffix(r.Path, "notes.json") && !r.NotExport:
			t.Errorf("notes.json not skipped: %+v", r)
		case strings.HasSuffix(r.Path, "].json") && (r.Inserted != 8 || r.CountMismatch()):
			t.Errorf("export: %+v", r)
		}
	}
}

// Two exports of one channel hold the same message with different text
// and no edit time; the one exported later must win, whatever the names
// of the files.
func TestNewerExportWins(t *testing.T) {
	old := strings.Replace(string(realExport(t)), "here is the config I use", "here is the config I used to use", 1)
	old = strings.Replace(old, `"exportedAt": "2024-06-02T10:00:00.1234567+09:00"`, `"exportedAt": "2024-05-02T10:00:00+09:00"`, 1)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a-newer.json"), realExport(t))
	write(t, filepath.Join(dir, "b-older.json"), []byte(old))
	listing, err := Files([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	im := newImporter(t)
	for _, r := range im.Import(context.Background(), listing.Files) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	m, err := im.DB.Message(context.Background(), 880000000000000101)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Content, "here is the config I use\n") {
		t.Errorf("content %q: the older export's text won", m.Content)
	}
}

// An export without exportedAt (older exporters) is dated by its file.
func TestByExportTimeFallsBackToModTime(t *testing.T) {
	dir := t.TempDir()
	noStamp := strings.Replace(string(realExport(t)), `"exportedAt": "2024-06-02T10:00:00.1234567+09:00",`, "", 1)
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	write(t, a, []byte(noStamp))
	write(t, b, []byte(noStamp))
	now := time.Now()
	if err := os.Chtimes(a, now, now); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(b, now, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := ByExportTime([]string{a, b}); got[0] != b {
		t.Errorf("order %v, want the older file first", got)
	}
}

func TestMessageCountMismatch(t *testing.T) {
	dir := t.TempDir()
	cut := strings.Replace(string(realExport(t)), `"messageCount": 8`, `"messageCount": 9`, 1)
	write(t, filepath.Join(dir, "x.json"), []byte(cut))
	r := newImporter(t).ImportFile(context.Background(), filepath.Join(dir, "x.json"))
	if r.Err != nil || !r.CountMismatch() || r.Count != 9 || r.Read != 8 {
		t.Errorf("result %+v: want a count mismatch of 9 and 8", r)
	}
}

// An older export imported in a later run fills gaps but replaces
// nothing: not a message's unedited text, not the channel's name.
func TestOlderExportInALaterRun(t *testing.T) {
	dir := t.TempDir()
	older := strings.Replace(string(realExport(t)), "here is the config I use", "here is the config I used to use", 1)
	older = strings.Replace(older, `"exportedAt": "2024-06-02T10:00:00.1234567+09:00"`, `"exportedAt": "2024-05-02T10:00:00+09:00"`, 1)
	older = strings.Replace(older, `"name": "general"`, `"name": "old-general"`, 1)
	write(t, filepath.Join(dir, "newer.json"), realExport(t))
	write(t, filepath.Join(dir, "older.json"), []byte(older))
	im := newImporter(t)
	ctx := context.Background()
	for _, f := range []string{"newer.json", "older.json"} { // two runs, the older export last
		if r := im.ImportFile(ctx, filepath.Join(dir, f)); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	m, err := im.DB.Message(ctx, 880000000000000101)
	if err != nil || !strings.HasPrefix(m.Content, "here is the config I use\n") {
		t.Errorf("content %q, %v: the older export's text replaced the newer", m.Content, err)
	}
	chans, err := im.DB.Channels(ctx)
	if err != nil || len(chans) != 1 || chans[0].Name != "general" {
		t.Errorf("channels %+v, %v: the older export's name came back", chans, err)
	}
	// A newer export still replaces what an older one wrote.
	newest := strings.Replace(string(realExport(t)), "here is the config I use", "here is the config I use now", 1)
	newest = strings.Replace(newest, `"exportedAt": "2024-06-02T10:00:00.1234567+09:00"`, `"exportedAt": "2024-07-02T10:00:00+09:00"`, 1)
	write(t, filepath.Join(dir, "newest.json"), []byte(newest))
	if r := im.ImportFile(ctx, filepath.Join(dir, "newest.json")); r.Err != nil || r.Updated != 1 {
		t.Fatalf("newest: %+v", r)
	}
}
