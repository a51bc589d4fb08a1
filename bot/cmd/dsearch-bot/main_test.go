package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"dsearch/shared/api"
)

// The launchd agent and systemd unit run the bot with flags it defines.
func TestDeployCommandLines(t *testing.T) {
	replacer := strings.NewReplacer("@BIN@", "/opt/dsearch/bin", "@SOCKET@", "/home/u/run/searchd.sock",
		"@TOKEN_FILE@", "/home/u/.config/dsearch/discord-token", "@DATA@", "/home/u/data", "@LOGS@", "/home/u/logs")
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return replacer.Replace(string(b))
	}
	var lines [][]string
	plist := read(filepath.Join("..", "..", "..", "deploy", "launchd", "com.dsearch.bot.plist.in"))
	args := regexp.MustCompile(`(?s)<key>ProgramArguments</key>\s*<array>(.*?)</array>`).FindStringSubmatch(plist)
	if args == nil {
		t.Fatal("the bot's plist has no ProgramArguments")
	}
	var plistArgs []string
	for _, m := range regexp.MustCompile(`<string>(.*?)</string>`).FindAllStringSubmatch(args[1], -1) {
		plistArgs = append(plistArgs, m[1])
	}
	lines = append(lines, plistArgs)
	unit := read(filepath.Join("..", "..", "..", "deploy", "systemd", "dsearch-bot.service.in"))
	exec := regexp.MustCompile(`(?m)^ExecStart=(.*)$`).FindStringSubmatch(unit)
	if exec == nil {
		t.Fatal("the bot's unit has no ExecStart")
	}
	lines = append(lines, strings.Fields(strings.ReplaceAll(exec[1], "%t", "/run/user/1000")))
	for _, l := range lines {
		if filepath.Base(l[0]) != "dsearch-bot" {
			t.Errorf("runs %s", l[0])
		}
		fs, _ := newFlags()
		if err := fs.Parse(l[1:]); err != nil {
			t.Errorf("%q: %v", l, err)
		}
		if fs.NArg() != 0 {
			t.Errorf("%q: stray arguments %q", l, fs.Args())
		}
	}
	for name, text := range map[string]string{"plist": plist, "unit": unit} {
		if !strings.Contains(text, "DSEARCH_TOKEN_FILE") || strings.Contains(text, "DSEARCH_TOKEN=") {
			t.Errorf("%s: the token must come from DSEARCH_TOKEN_FILE", name)
		}
	}
}

func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	os.WriteFile(path, []byte("Bot abc.def\n"), 0o644)
	t.Setenv("DSEARCH_TOKEN_FILE", path)
	if _, err := readToken(); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable token file: %v", err)
	}
	os.Chmod(path, 0o600)
	if tok, err := readToken(); err != nil || tok != "abc.def" {
		t.Errorf("token %q, %v", tok, err)
	}
	t.Setenv("DSEARCH_TOKEN_FILE", "")
	t.Setenv("DSEARCH_TOKEN", "")
	if _, err := readToken(); err == nil || !strings.Contains(err.Error(), "DSEARCH_TOKEN_FILE") {
		t.Errorf("no token: %v", err)
	}
}

// fakeSearchd answers healthz and takes batches, refusing those that
// delete message 2 as bad. Its socket is in a new 0700 directory with a
// short name (the socket path limit); asked, when not nil, counts requests.
func fakeSearchd(t *testing.T, asked *atomic.Int32) (dir, sock string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "dsb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o700)
	sock = filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/healthz", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(api.Health{OK: true, Version: "test", SchemaVersion: 7})
	})
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		var b api.MessageBatch
		json.NewDecoder(r.Body).Decode(&b)
		if len(b.Deletes) > 0 && b.Deletes[0] == 2 {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(api.Error{Message: "deletes[0]: not today", Code: api.CodeBadBatch})
			return
		}
		json.NewEncoder(w).Encode(api.BatchResult{Deleted: len(b.Deletes)})
	})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked != nil {
			asked.Add(1)
		}
		mux.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return dir, sock
}

// --check reports rejected batches; --replay-rejected sends them again
// and keeps the ones refused again.
func TestCheckAndReplayRejected(t *testing.T) {
	_, sock := fakeSearchd(t, nil)
	spoolDir := filepath.Join(t.TempDir(), "bot-spool")
	os.MkdirAll(filepath.Join(spoolDir, "rejected"), 0o700)
	for i, id := range []int{1, 2} {
		b, _ := json.Marshal(api.MessageBatch{Deletes: []api.ID{api.ID(id)}})
		os.WriteFile(filepath.Join(spoolDir, "rejected", fmt.Sprintf("%020d.json", i+1)), b, 0o600)
	}
	cmd := func(args ...string) (string, error) {
		var out strings.Builder
		err := run(append([]string{"--socket", sock, "--spool", spoolDir}, args...), &out)
		return out.String(), err
	}
	if out, err := cmd("--check"); err == nil || !strings.Contains(err.Error(), "refused 2 batches") ||
		!strings.Contains(err.Error(), "--replay-rejected") || !strings.Contains(out, "is up") {
		t.Errorf("--check: %v\n%s", err, out)
	}
	out, err := cmd("--replay-rejected")
	if err == nil || !strings.Contains(err.Error(), "1 of 2 rejected batches refused again") ||
		!strings.Contains(out, "01.json: delivered") || !strings.Contains(out, "02.json: refused again: searchd: deletes[0]: not today") {
		t.Errorf("--replay-rejected: %v\n%s", err, out)
	}
	if out, err := cmd("--check"); err == nil || !strings.Contains(err.Error(), "refused 1 batches") {
		t.Errorf("--check after replay: %v\n%s", err, out)
	}
	os.Remove(filepath.Join(spoolDir, "rejected", fmt.Sprintf("%020d.json", 2)))
	if out, err := cmd("--check"); err != nil {
		t.Errorf("--check with nothing rejected: %v\n%s", err, out)
	}
}
