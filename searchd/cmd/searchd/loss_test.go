package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dsearch/searchd/embed/embedtest"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
)

// testMessage is one message of a hand-made export.
type testMessage struct {
	ID      int64
	Content string
	Author  string // default nick0, nick1, nick2 in turn
}

// writeExport writes a DiscordChatExporter export of one channel, a
// minute between messages, and returns its path.
func writeExport(t *testing.T, path string, channel int64, msgs []testMessage) string {
	t.Helper()
	type user struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	type message struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Content   string `json:"content"`
		Author    user   `json:"author"`
	}
	t0 := time.Date(2004, 11, 15, 12, 0, 0, 0, time.UTC)
	exp := map[string]any{
		"guild":   map[string]string{"id": "1000000000000000002", "name": "irc"},
		"channel": map[string]string{"id": fmt.Sprint(channel), "type": "GuildTextChat", "name": "old"},
	}
	var ms []message
	for i, m := range msgs {
		name := m.Author
		if name == "" {
			name = fmt.Sprintf("nick%d", i%3)
		}
		ms = append(ms, message{ID: fmt.Sprint(m.ID), Type: "Default", Timestamp: t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
			Content: m.Content, Author: user{ID: fmt.Sprint(4000 + i%3), Name: name}})
	}
	exp["messages"] = ms
	b, err := json.Marshal(exp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// IRC logs converted to exports have negative IDs (snowflakes of times
// before Discord's 2015 epoch): embed must embed them, and doctor must
// say what is left until it has.
func TestEmbedNegativeIDs(t *testing.T) {
	dir := t.TempDir()
	var msgs []testMessage
	for i := range 20 {
		msgs = append(msgs, testMessage{ID: -1340286991073280000 + int64(i)*4194304, Content: fmt.Sprintf("an old IRC line number %d about partitions", i)})
	}
	path := writeExport(t, filepath.Join(dir, "irc", "old.json"), 5000000000000000000, msgs)
	data := filepath.Join(dir, "data")
	if out, err := run(t, "import", "--data", data, path); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	doctor := func() string {
		out, _ := run(t, "doctor", "--data", data, "--llm=false", "--embed-backend", "go", "--socket", filepath.Join(dir, "run", "s.sock"))
		return out
	}
	if out := doctor(); !strings.Contains(out, "20 of 20 messages not embedded") {
		t.Errorf("doctor before embedding:\n%s", out)
	}
	model := filepath.Join(dir, "model")
	if err := embedtest.Write(model, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "embed", "--data", data, "--model", model, "--embed-backend", "go"); err != nil {
		t.Fatalf("embed: %v\n%s", err, out)
	}
	if out := doctor(); !strings.Contains(out, "20 messages current") {
		t.Errorf("doctor after embedding:\n%s", out)
	}
}

func someMessages(first int64, n int) []testMessage {
	var out []testMessage
	for i := range n {
		out = append(out, testMessage{ID: first + int64(i), Content: fmt.Sprintf("message number %d", i)})
	}
	return out
}

// Two exports pasted into one file: the file is refused, by path and byte
// offset, the import fails, and the other files are imported.
func TestImportRefusesConcatenatedExports(t *testing.T) {
	dir := t.TempDir()
	bad := writeExport(t, filepath.Join(dir, "x", "a.json"), 7, someMessages(100, 3))
	doc, _ := os.ReadFile(bad)
	os.WriteFile(bad, append(append(doc, '\n'), doc...), 0o600)
	writeExport(t, filepath.Join(dir, "x", "b.json"), 8, someMessages(200, 2))
	data := filepath.Join(dir, "data")
	out, err := run(t, "import", "--data", data, filepath.Join(dir, "x"))
	if err == nil || !strings.Contains(out, fmt.Sprintf("%s: at byte %d: data after the end of the export", bad, len(doc)+1)) {
		t.Errorf("import: %v\n%s", err, out)
	}
	if !strings.Contains(out, "b.json: 2 new") {
		t.Errorf("the good file was not imported:\n%s", out)
	}
}

// A path that cannot be read is reported; everything else is imported and
// the import fails.
func TestImportReportsUnreadablePath(t *testing.T) {
	dir := t.TempDir()
	good := writeExport(t, filepath.Join(dir, "good", "a.json"), 7, someMessages(100, 3))
	data := filepath.Join(dir, "data")
	missing := filepath.Join(dir, "gone")
	out, err := run(t, "import", "--data", data, missing, filepath.Dir(good))
	if err == nil || !strings.Contains(out, "error: stat "+missing) || !strings.Contains(out, "a.json: 3 new") {
		t.Errorf("import: %v\n%s", err, out)
	}
}

// cancelOnWrite cancels a context at the first progress line: Ctrl-C
// during an import.
type cancelOnWrite struct {
	strings.Builder
	cancel func()
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "importing") {
		w.cancel()
	}
	return w.Builder.Write(p)
}

// Ctrl-C during an import says once that it was interrupted and will
// resume, not that files failed.
func TestImportInterrupted(t *testing.T) {
	dir := t.TempDir()
	for i := range 8 {
		writeExport(t, filepath.Join(dir, "x", fmt.Sprintf("%d.json", i)), int64(10+i), someMessages(int64(1000*(i+1)), 20))
	}
	// A file that fails on its own is still reported.
	bad := filepath.Join(dir, "x", "0-bad.json")
	os.WriteFile(bad, []byte(`{"guild":`), 0o600)
	// Files go oldest export first (ingest.ByExportTime): the bad one first.
	os.Chtimes(bad, time.Now(), time.Now().Add(-time.Hour))
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout strings.Builder
	stderr := &cancelOnWrite{cancel: cancel}
	err := (&Main{Stdout: &stdout, Stderr: stderr}).Run(ctx, []string{"import", "--data", data, filepath.Join(dir, "x")})
	out := stdout.String() + stderr.String()
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), "run it again to resume") ||
		strings.Contains(err.Error(), "failed") || strings.Contains(out, "context canceled") ||
		strings.Count(out, "error: ") != 1 || !strings.Contains(out, "0-bad.json: at byte") {
		t.Errorf("import: %v\n%s", err, out)
	}
	// The rerun resumes and finishes.
	os.Remove(filepath.Join(dir, "x", "0-bad.json"))
	if out, err := run(t, "import", "--data", data, filepath.Join(dir, "x")); err != nil || !strings.Contains(out, "from 8 files") {
		t.Errorf("rerun: %v\n%s", err, out)
	}
}

// A message far over the content limit is imported cut to it, at a rune
// boundary and marked, and counted in the report; so is an absurd name.
func TestImportBoundsHugeMessages(t *testing.T) {
	dir := t.TempDir()
	huge := strings.Repeat("보일러가 또 고장났어 ", 1<<20/30) // 1 MiB
	path := writeExport(t, filepath.Join(dir, "x", "a.json"), 7, []testMessage{
		{ID: 100, Content: "an ordinary message"},
		{ID: 101, Content: huge},
		{ID: 102, Content: "a name too long", Author: strings.Repeat("n", 10000)},
	})
	data := filepath.Join(dir, "data")
	out, err := run(t, "import", "--data", data, path)
	if err != nil || !strings.Contains(out, "3 new") || !strings.Contains(out, "2 over the size limits kept cut") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	db, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := db.Message(context.Background(), 101)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Content) > api.MaxContentBytes || !strings.HasSuffix(m.Content, api.TruncatedMarker) ||
		!strings.HasPrefix(huge, strings.TrimSuffix(m.Content, api.TruncatedMarker)) {
		t.Errorf("stored %d bytes ending %q", len(m.Content), m.Content[max(0, len(m.Content)-20):])
	}
	if m, err := db.Message(context.Background(), 102); err != nil || len(m.AuthorName) > api.MaxNameBytes {
		t.Errorf("stored author name of %d bytes, %v", len(m.AuthorName), err)
	}
	// Importing it again changes nothing: the cut copy is what is stored.
	os.Chtimes(path, time.Now(), time.Now().Add(time.Minute))
	if out, err := run(t, "import", "--data", data, path); err != nil || !strings.Contains(out, "0 new, 0 updated, 3 unchanged") {
		t.Errorf("reimport: %v\n%s", err, out)
	}
}
