package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"dsearch/searchd/embed/embedtest"
	"dsearch/searchd/internal/sample"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
	"dsearch/shared/client"
)

// importSample writes the sample export under dir and imports it into
// dir/data, which it returns.
func importSample(t *testing.T, dir string) string {
	t.Helper()
	paths, err := sample.WriteSample(filepath.Join(dir, "sample"))
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if out, err := run(t, "import", "--data", data, filepath.Dir(paths[0])); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	return data
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdout: &out, Stderr: &errb}
	err := m.Run(context.Background(), args)
	return out.String() + errb.String(), err
}

func TestImportStatsSegment(t *testing.T) {
	dir := t.TempDir()
	paths, err := sample.WriteSample(filepath.Join(dir, "sample"))
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	out, err := run(t, "import", "--data", data, filepath.Dir(paths[0]))
	if err != nil || !strings.Contains(out, "imported 42 new") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	// --data from the environment, gap from a config file.
	t.Setenv("DSEARCH_DATA", data)
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, []byte("# dsearch\ngap 45m\n"), 0o600)
	out, err = run(t, "stats", "--config", cfg)
	if err != nil || !strings.Contains(out, "messages 42") || !strings.Contains(out, "exceed --gap 45m 0s") ||
		!strings.Contains(out, "  50%  ") {
		t.Fatalf("stats: %v\n%s", err, out)
	}
	out, err = run(t, "segment", "1")
	if err != nil || !strings.Contains(out, "segment 1:") || !strings.Contains(out, "embedding text:") {
		t.Fatalf("segment: %v\n%s", err, out)
	}
	if _, err := run(t, "segment", "x"); err == nil {
		t.Error("segment x: no error")
	}
	if _, err := run(t, "import", "--data", data, filepath.Join(dir, "missing.json")); err == nil {
		t.Error("import of a missing file: no error")
	}
	if _, err := run(t, "stats", "--log-format", "yaml", "--gap", "-1s"); err == nil {
		t.Error("negative gap accepted")
	}
}

func TestFormatGap(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Second:                "10s",
		94 * time.Second:                "1m 34s",
		25*time.Minute + 33*time.Second: "25m 33s",
		time.Hour + 45*time.Minute:      "1h 45m",
		17*time.Hour + 31*time.Minute:   "17h 31m",
		50 * time.Hour:                  "2d 2h",
	} {
		if got := FormatGap(d); got != want {
			t.Errorf("FormatGap(%v) = %q, want %q", d, got, want)
		}
	}
}

// The whole binary: serve on a private socket, answer a client, and on
// SIGINT exit cleanly with the socket removed.
func TestServeBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir, err := os.MkdirTemp("", "ds")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "searchd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "run", "s.sock")
	data := importSample(t, dir)
	model := filepath.Join(dir, "model")
	if err := embedtest.Write(model, embedtest.Options{}); err != nil {
		t.Fatal(err)
	}
	start := func(data string) (*exec.Cmd, *bytes.Buffer) {
		var logs bytes.Buffer
		cmd := exec.Command(bin, "serve", "--data", data, "--socket", sock, "--model", model, "--embed-backend", "go")
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &logs
	}
	cmd, logs := start(data)
	c := client.New(sock)
	var up bool
	for i := 0; i < 100 && !up; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Health(ctx)
		cancel()
		up = err == nil
		if !up {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !up {
		cmd.Process.Kill()
		t.Fatalf("searchd did not come up:\n%s", logs)
	}
	fi, err := os.Stat(filepath.Dir(sock))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory: %v %v", fi.Mode(), err)
	}

	// The background job embeds the sample; /v1/stats shows it.
	var st *api.Stats
	for i := 0; i < 200; i++ {
		if st, err = c.Stats(context.Background()); err != nil {
			t.Fatal(err)
		}
		if e := st.Embedding; e != nil && e.SegmentsEmbedded == e.Segments && e.MessagesEmbedded == e.Messages {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if e := st.Embedding; e == nil || e.Model != "embedtest" || e.SegmentsEmbedded != e.Segments ||
		e.VectorsInMemory != int(e.SegmentsEmbedded-e.SegmentsTooShort) || e.VectorsInMemory == 0 {
		t.Errorf("embedding status: %+v\n%s", st.Embedding, logs)
	}
	if out, err := run(t, "status", "--socket", sock); err != nil || !strings.Contains(out, "embedding (embedtest): up to date") {
		t.Errorf("status: %v\n%s", err, out)
	}
	// While serve embeds, `searchd embed` on its database is refused.
	db, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	// Held under another name than serve's own job's: taken under the
	// same one, the job's release as it ended (just after the stats
	// above showed everything embedded) dropped it, and embed ran.
	serve := fmt.Sprintf("searchd serve (pid %d)", cmd.Process.Pid+1)
	for i := 0; ; i++ {
		held, err := db.AcquireLease(context.Background(), sqlite.LeaseEmbedding, serve, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if held == nil {
			break
		}
		if i == 200 {
			t.Fatalf("serve's job still holds the embedding lease: %+v", held)
		}
		time.Sleep(50 * time.Millisecond)
	}
	db.Close()
	if out, err := run(t, "embed", "--data", data, "--model", model, "--embed-backend", "go"); err == nil ||
		!strings.Contains(err.Error(), serve+" is embedding this database") {
		t.Errorf("embed while serve embeds: %v\n%s", err, out)
	}

	// A second daemon on the same data directory refuses to start, and
	// so does one of another data directory on the same socket.
	second, secondLogs := start(data)
	if err := second.Wait(); err == nil || !strings.Contains(secondLogs.String(), "locked by a running searchd serve") {
		t.Errorf("second daemon: %v\n%s", err, secondLogs)
	}
	third, thirdLogs := start(filepath.Join(dir, "other-data"))
	if err := third.Wait(); err == nil || !strings.Contains(thirdLogs.String(), "already in use") {
		t.Errorf("daemon on the same socket: %v\n%s", err, thirdLogs)
	}

	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGINT: %v\n%s", err, logs)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("searchd did not stop on SIGINT:\n%s", logs)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
	if !strings.Contains(logs.String(), "searchd stopped") {
		t.Errorf("logs:\n%s", logs)
	}
}

// A database embedded with one model refuses another until reindex.
func TestEmbedModelChange(t *testing.T) {
	dir := t.TempDir()
	data := importSample(t, dir)
	first, second := filepath.Join(dir, "first"), filepath.Join(dir, "second")
	embedtest.Write(first, embedtest.Options{Name: "first"})
	embedtest.Write(second, embedtest.Options{Name: "second", Pooled: true})
	out, err := run(t, "embed", "--data", data, "--model", first, "--embed-backend", "go")
	if err != nil || !strings.Contains(out, "outside inference") {
		t.Fatalf("embed: %v\n%s", err, out)
	}
	out, err = run(t, "embed", "--data", data, "--model", first, "--embed-backend", "go")
	if err != nil || !strings.Contains(out, "embedded 0 segments and 0 messages") {
		t.Fatalf("second embed redid work: %v\n%s", err, out)
	}
	if _, err := run(t, "embed", "--data", data, "--model", second, "--embed-backend", "go"); err == nil ||
		!strings.Contains(err.Error(), "searchd reindex") || !strings.Contains(err.Error(), "first") {
		t.Fatalf("other model: %v", err)
	}
	out, err = run(t, "reindex", "--data", data, "--model", second, "--embed-backend", "go")
	if err != nil || strings.Contains(out, "embedded 0 segments") {
		t.Fatalf("reindex: %v\n%s", err, out)
	}
	if _, err := run(t, "embed", "--data", data, "--model", filepath.Join(dir, "missing"), "--embed-backend", "go"); err == nil ||
		!strings.Contains(err.Error(), "does not exist: check --model") {
		t.Errorf("missing model: %v", err)
	}
}

func TestEvalCommands(t *testing.T) {
	dir := t.TempDir()
	paths, err := sample.WriteSample(filepath.Join(dir, "sample"))
	if err != nil {
		t.Fatal(err)
	}
	// Find the sample's boiler messages: the relevant answers.
	var boiler, jan14 []string
	for _, p := range paths {
		x, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var exp struct {
			Messages []struct{ ID, Content, Timestamp string }
		}
		if err := json.Unmarshal(x, &exp); err != nil {
			t.Fatal(err)
		}
		for _, m := range exp.Messages {
			if strings.Contains(m.Content, "보일러") || strings.Contains(m.Content, "boiler") {
				boiler = append(boiler, m.ID)
			}
			if strings.HasPrefix(m.Timestamp, "2025-01-14") {
				jan14 = append(jan14, m.ID) // the boiler conversation
			}
		}
	}
	q, _ := json.Marshal(map[string]any{"id": "q1", "query": "the boiler broke", "channel_id": sample.GeneralID, "relevant": boiler, "category": "test"})
	queries := filepath.Join(dir, "queries.jsonl")
	os.WriteFile(queries, append(q, '\n'), 0o644)
	model := filepath.Join(dir, "model")
	embedtest.Write(model, embedtest.Options{})
	dump := filepath.Join(dir, "dump.jsonl")
	out, err := run(t, "eval", "retrieval", "--export", filepath.Dir(paths[0]), "--queries", queries,
		"--model", model, "--embed-backend", "go", "--dump", dump, "--llm=false")
	if err != nil {
		t.Fatalf("eval retrieval: %v\n%s", err, out)
	}
	for _, mode := range []string{"lexical", "semantic", "hybrid", "pipeline", "query"} {
		if !strings.Contains(out, "mode "+mode) {
			t.Errorf("no %s table:\n%s", mode, out)
		}
	}
	if !strings.Contains(out, "R@1") || !strings.Contains(out, "all") {
		t.Errorf("output:\n%s", out)
	}
	d, _ := os.ReadFile(dump)
	if n := strings.Count(string(d), `"ranked"`); n != 5 {
		t.Errorf("dump has %d lines, want one per mode", n)
	}
	// Lexical ranks a boiler message first (the query says "boiler").
	for _, line := range strings.Split(strings.TrimSpace(string(d)), "\n") {
		var row struct {
			Mode   string
			Ranked []string
		}
		json.Unmarshal([]byte(line), &row)
		if row.Mode == "lexical" && (len(row.Ranked) == 0 || !slices.Contains(boiler, row.Ranked[0])) {
			t.Errorf("lexical ranked %v first, not a boiler message %v", row.Ranked, boiler)
		}
	}

	// Segments: a gold conversation that the sample's segmentation matches.
	gold := filepath.Join(dir, "gold.jsonl")
	g, _ := json.Marshal(map[string]any{"channel_id": sample.GeneralID, "messages": jan14})
	os.WriteFile(gold, append(g, '\n'), 0o644)
	out, err = run(t, "eval", "segments", "--export", filepath.Dir(paths[0]), "--gold", gold, "--dump", dump)
	if err != nil || !strings.Contains(out, "1-VI 100.0  1-1 100.0  P 100.0  R 100.0  F 100.0") {
		t.Errorf("eval segments: %v\n%s", err, out)
	}
	if d, _ := os.ReadFile(dump); !strings.Contains(string(d), `"segment_id"`) {
		t.Errorf("segment dump: %s", d)
	}
	if _, err := run(t, "eval", "retrieval", "--export", dir); err == nil {
		t.Error("missing --queries accepted")
	}
}

func TestDoctorBackupForget(t *testing.T) {
	dir := t.TempDir()
	data := importSample(t, dir)
	// A dead Ollama: a closed port on loopback.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	os.Chmod(data, 0o755)
	os.MkdirAll(filepath.Join(data, "bot-spool", "rejected"), 0o700)
	os.WriteFile(filepath.Join(data, "bot-spool", "rejected", "00000000000000000007.json"), []byte(`{}`), 0o600)
	os.WriteFile(filepath.Join(data, "bot-spool", api.BotStatusFile), []byte(`{"stopped":"Discord closed the gateway with code 4004, authentication failed"}`), 0o600)
	os.WriteFile(filepath.Join(data, "dsearch.db.before-restore-20261201T000000Z"), []byte("an old copy"), 0o600)
	out, err := run(t, "doctor", "--data", data, "--model", filepath.Join(dir, "nomodel"), "--embed-backend", "go",
		"--ollama-url", dead, "--socket", filepath.Join(dir, "run", "s.sock"))
	if err == nil {
		t.Error("doctor passed a broken set-up")
	}
	for _, want := range []string{"fix: chmod 700", "does not exist: check --model", "not reachable", "ollama serve", "refused 1 of the bot's batches",
		"the bot stopped for good: Discord closed the gateway with code 4004", "1 copy of the database beside it (dsearch.db.before-restore-20261201T000000Z)"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	os.Chmod(data, 0o700)

	backup := filepath.Join(dir, "backup.db")
	if out, err := run(t, "backup", "--data", data, backup); err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup file: %v, %v", fi, err)
	}
	out, err = run(t, "forget", "--data", data, "--author", "910000000000000003")
	if err != nil || !strings.Contains(out, "forgot ") || strings.Contains(out, "forgot 0 ") {
		t.Fatalf("forget: %v\n%s", err, out)
	}
	if _, err := run(t, "forget", "--data", data); err == nil {
		t.Error("forget with no selection accepted")
	}
	// A channel's threads go with it (the sample's thread hangs off
	// #general).
	if out, err := run(t, "forget", "--data", data, "--channel", sample.GeneralID); err != nil {
		t.Fatalf("forget --channel: %v\n%s", err, out)
	}
	// A mistyped ID forgets nothing, and says so.
	if out, err := run(t, "forget", "--data", data, "--channel", "123456789"); err != nil || !strings.Contains(out, "no stored message matched") {
		t.Errorf("forget of a channel never stored: %v\n%s", err, out)
	}
	db, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	thread, _ := api.ParseID(sample.ThreadID)
	if ids, err := db.MessageIDs(context.Background(), int64(thread), 0, math.MaxInt64, 10); err != nil || len(ids) != 0 {
		t.Errorf("after forget --channel #general: its thread holds messages %v (%v); want none", ids, err)
	}
}

func TestEmbeddingLine(t *testing.T) {
	for _, c := range []struct {
		e    api.EmbeddingStats
		want string
	}{
		{api.EmbeddingStats{Model: "m", Phase: "segments", Segments: 40, SegmentsEmbedded: 10, Messages: 100, SegmentsPerSecond: 2, ETASeconds: 15},
			"embedding (m): segments 10 of 40 (25.0 %), messages 0 of 100, 2.0 segments/s, about 15s left"},
		{api.EmbeddingStats{Model: "m", Phase: "idle", Segments: 40, SegmentsEmbedded: 40, Messages: 9, MessagesEmbedded: 9, VectorsInMemory: 38},
			"embedding (m): up to date, 38 vectors in memory"},
		{api.EmbeddingStats{Model: "m", Phase: "waiting", Elsewhere: "searchd embed (pid 7)", Segments: 40},
			"embedding (m): waiting, searchd embed (pid 7) is embedding this database"},
	} {
		if got := embeddingLine(&c.e); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// searchd segment says why each message is in its conversation: the
// blog's example splits in two, and 2005 joins 2001's by its link.
func TestSegmentShowsLinks(t *testing.T) {
	dir := t.TempDir()
	var msgs []string
	for _, l := range []struct{ id, author, at, text string }{
		{"2001", "1", "15:02:00", "this really should go on sale"},
		{"2002", "2", "15:02:10", "oh btw there's a new edition out"},
		{"2003", "2", "15:02:25", "maybe i'll buy it used"},
		{"2004", "2", "15:02:40", "wait no, i was given one"},
		{"2005", "1", "15:03:10", "ended up paying full price"},
	} {
		msgs = append(msgs, fmt.Sprintf(`{"id":%q,"type":"Default","timestamp":"2025-03-01T%s+00:00","content":%q,"author":{"id":%q,"name":"friend%s"}}`,
			l.id, l.at, l.text, l.author, l.author))
	}
	export := fmt.Sprintf(`{"guild":{"id":"1","name":"friends"},"channel":{"id":"7","type":"GuildTextChat","name":"general"},"messages":[%s]}`,
		strings.Join(msgs, ","))
	path := filepath.Join(dir, "blog.json")
	if err := os.WriteFile(path, []byte(export), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if out, err := run(t, "import", "--data", data, path); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	out, err := run(t, "segment", "--data", data, "1")
	if err != nil || !strings.Contains(out, "segment 1: channel 7, 2 messages") || !strings.Contains(out, "links to 2001: score") ||
		!strings.Contains(out, "starts a conversation") || strings.Contains(out, "placed otherwise") {
		t.Errorf("segment 1: %v\n%s", err, out)
	}
	out, err = run(t, "segment", "--data", data, "2")
	if err != nil || !strings.Contains(out, "segment 2: channel 7, 3 messages") || !strings.Contains(out, "links to 2002: score") ||
		strings.Contains(out, "placed otherwise") {
		t.Errorf("segment 2: %v\n%s", err, out)
	}
	// Under other rules the same line would be placed otherwise, and says so.
	out, err = run(t, "segment", "--data", data, "--linker", "off", "1")
	if err != nil || !strings.Contains(out, "placed otherwise") {
		t.Errorf("segment 1 under the blog's rules: %v\n%s", err, out)
	}
}

// eval retrieval --keep reuses its scratch database (and vectors) for the
// same export, gives the same scores, and refuses one kept for another.
func TestEvalRetrievalKeep(t *testing.T) {
	dir := t.TempDir()
	paths, err := sample.WriteSample(filepath.Join(dir, "sample"))
	if err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(map[string]any{"id": "q1", "query": "the boiler broke", "channel_id": sample.GeneralID, "relevant": []string{"1"}, "category": "test"})
	queries := filepath.Join(dir, "queries.jsonl")
	os.WriteFile(queries, append(q, '\n'), 0o644)
	model := filepath.Join(dir, "model")
	embedtest.Write(model, embedtest.Options{})
	keep := filepath.Join(dir, "keep")
	export := filepath.Dir(paths[0])
	args := []string{"eval", "retrieval", "--export", export, "--queries", queries, "--model", model, "--embed-backend", "go", "--llm=false", "--keep", keep}
	first, err := run(t, args...)
	if err != nil {
		t.Fatalf("first run: %v\n%s", err, first)
	}
	if b, err := os.ReadFile(filepath.Join(keep, "imported")); err != nil || string(b) != export+"\n" {
		t.Fatalf("kept import: %q, %v", b, err)
	}
	second, err := run(t, args...)
	// The tables, without the log and the embedding's time.
	tables := func(out string) string {
		return out[strings.Index(out, "queries over"):strings.Index(out, "embedded with")]
	}
	if err != nil || !strings.Contains(first, "mode query") || tables(second) != tables(first) {
		t.Errorf("second run: %v\n%s\nwant\n%s", err, second, first)
	}
	other := filepath.Join(dir, "other")
	os.MkdirAll(other, 0o755)
	args[3] = other
	if out, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "holds another import") {
		t.Errorf("another export with the same --keep: %v\n%s", err, out)
	}
}
