package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dsearch/searchd/embed/embedtest"
)

// testMessage is one message of a hand-made export.
type testMessage struct {
	ID      int64
	Content string
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
		ms = append(ms, message{ID: fmt.Sprint(m.ID), Type: "Default", Timestamp: t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
			Content: m.Content, Author: user{ID: fmt.Sprint(4000 + i%3), Name: fmt.Sprintf("nick%d", i%3)}})
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
