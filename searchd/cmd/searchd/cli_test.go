package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cli is the searchd binary, built once for a test, run as a user runs it.
type cli struct {
	t   *testing.T
	bin string
	env []string
}

func buildCLI(t *testing.T) *cli {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "searchd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	home := t.TempDir()
	// A home of its own: no user's config or data is read or written.
	return &cli{t: t, bin: bin, env: []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_RUNTIME_DIR=" + filepath.Join(home, "run"), "PATH=" + os.Getenv("PATH")}}
}

// run runs the binary and returns its stdout, stderr and exit code.
func (c *cli) run(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var xe *exec.ExitError
	switch {
	case errors.As(err, &xe):
		code = xe.ExitCode()
	case err != nil:
		c.t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func realExportFile(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "export", "testdata", "dce-2.43.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCLIImportRealExports imports what DiscordChatExporter writes, as a
// user would: with its asset folder, beside exports in other formats.
func TestCLIImportRealExports(t *testing.T) {
	c := buildCLI(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	exports := filepath.Join(dir, "exports")
	writeFile(t, filepath.Join(exports, "Study Group - general [880000000000000010].json"), realExportFile(t))
	writeFile(t, filepath.Join(exports, "Study Group - general [880000000000000010].json_Files", "tsconfig-5F3A1.json"), []byte(`{"compilerOptions": {"strict": true}}`))
	writeFile(t, filepath.Join(exports, "Study Group - general [880000000000000010].html"), []byte("<!DOCTYPE html>\n<html lang=\"en\">"))
	for run := 1; run <= 2; run++ {
		out, errs, code := c.run("import", "--data", data, exports)
		if code != 0 || strings.Contains(out+errs, "no messages array") || !strings.Contains(errs, "not in JSON (1 .html)") {
			t.Fatalf("import run %d: exit %d\n%s%s", run, code, out, errs)
		}
		if run == 1 && !strings.Contains(out, "imported 8 new and 0 updated messages from 1 file ") {
			t.Errorf("import: %s", out)
		}
	}

	// Files named one by one: what each one is, and what to do.
	html := filepath.Join(exports, "Study Group - general [880000000000000010].html")
	zip := filepath.Join(dir, "export.zip")
	writeFile(t, zip, []byte("PK\x03\x04\x14\x00\x00\x00"))
	out, errs, code := c.run("import", "--data", data, html, zip)
	if code != 1 || !strings.Contains(errs, "this is an HTML file, not a JSON export: export the channel again with DiscordChatExporter's JSON format") ||
		!strings.Contains(errs, "unzip it first") || strings.Contains(errs, "rerun resumes") || strings.Contains(errs, "invalid character") {
		t.Errorf("import of HTML and zip: exit %d\n%s%s", code, out, errs)
	}

	// A message whose ID is stored in another channel is refused, in the
	// summary and the exit status; a messageCount that disagrees warns.
	moved := strings.ReplaceAll(string(realExportFile(t)), "880000000000000010", "880000000000000011")
	moved = strings.Replace(moved, `"messageCount": 8`, `"messageCount": 9`, 1)
	other := filepath.Join(dir, "moved.json")
	writeFile(t, other, []byte(moved))
	out, errs, code = c.run("import", "--data", data, other)
	if code != 1 || !strings.Contains(out, "8 messages refused") || !strings.Contains(errs, "8 messages were refused") ||
		!strings.Contains(errs, "says it holds 9 messages but 8 were read") {
		t.Errorf("import of conflicting IDs: exit %d\n%s%s", code, out, errs)
	}

	out, errs, code = c.run("stats", "--data", data)
	if code != 0 || !strings.Contains(out, "guilds 1, channels 2,") {
		t.Errorf("stats: exit %d\n%s%s", code, out, errs)
	}
}

// TestCLIAsNewcomer drives the binary the way a new user does: flags
// after the query, dates as people write them, mistakes in flags, names
// of channels, a daemon that is not running, a typo in --data.
func TestCLIAsNewcomer(t *testing.T) {
	c := buildCLI(t)
	dir := shortTemp(t)
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "run", "s.sock")
	writeFile(t, filepath.Join(dir, "x", "general.json"), realExportFile(t))
	if out, errs, code := c.run("import", "--data", data, filepath.Join(dir, "x")); code != 0 {
		t.Fatalf("import: %s%s", out, errs)
	}
	at := []string{"--data", data, "--socket", sock}

	// No daemon yet: say so, and how to start one.
	for _, cmd := range [][]string{{"search", "config"}, {"status"}, {"query", "who shared a config?"}, {"catchup", "--channel", "general"}} {
		out, errs, code := c.run(append(cmd, at...)...)
		if code != 1 || !strings.Contains(errs, "searchd is not running") || !strings.Contains(errs, "start it with `searchd serve") ||
			strings.Contains(errs, "lstat") || strings.Contains(errs, "http://") {
			t.Errorf("%v without a daemon: exit %d\n%s%s", cmd, code, out, errs)
		}
	}

	startServe(t, sock, "--data", data) // no model: lexical is the daemon's default

	// Flags after the query are flags; the daemon picks the mode.
	out, errs, code := c.run(append([]string{"search", "tsconfig", "--limit", "1"}, at...)...)
	if code != 0 || !strings.Contains(out, "1. ") || !strings.Contains(out, "#general") || !strings.Contains(out, "📎 tsconfig.json") ||
		!strings.Contains(out, "conversation ") || !strings.Contains(out, "(lexical mode)") || strings.Contains(out, "2. ") {
		t.Errorf("search tsconfig --limit 1: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = c.run(append([]string{"search", "effective", "go", "--mode", "lexical", "--channel", "#general"}, at...)...)
	if code != 0 || !strings.Contains(out, "Effective Go") {
		t.Errorf("search with flags after the query: exit %d\n%s%s", code, out, errs)
	}
	// A call or a join is history, never a search hit.
	for _, q := range []string{"lasted", "joined"} {
		out, errs, code = c.run(append([]string{"search", q, "--mode", "lexical"}, at...)...)
		if code != 0 || strings.Contains(out, "Started a call") || strings.Contains(out, "Joined the server") {
			t.Errorf("search %s: exit %d\n%s%s", q, code, out, errs)
		}
	}
	// Dates as people type them, in both languages.
	for _, since := range []string{"2024-05-01", "2024/05/01", "May 2024", "5월", "2024년 5월", "7d", "yesterday", "어제"} {
		if out, errs, code := c.run(append([]string{"search", "config", "--since", since}, at...)...); code != 0 {
			t.Errorf("--since %s: exit %d\n%s%s", since, code, out, errs)
		}
	}
	out, errs, code = c.run(append([]string{"search", "config", "--since", "banana"}, at...)...)
	if code != 1 || !strings.Contains(errs, `--since: "banana" is not a time`) || !strings.Contains(errs, "2024-05-01") ||
		strings.Contains(errs, "searchd: searchd") || strings.Contains(errs, "HTTP") {
		t.Errorf("--since banana: exit %d\n%s%s", code, out, errs)
	}
	// Catch-up by channel name; an empty one says so.
	// System messages (a join, a call) are history, not what was said: no
	// preview, no conversation of their own in a catch-up.
	out, errs, code = c.run(append([]string{"catchup", "--channel", "general", "--since", "2024-05-01"}, at...)...)
	if code != 0 || !strings.Contains(out, "2024-05-01") || !strings.Contains(out, "conversation ") ||
		strings.Contains(out, "Joined the server") || strings.Contains(out, "Started a call") || strings.Count(out, "conversation ") != 1 {
		t.Errorf("catchup --channel general: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = c.run(append([]string{"catchup", "--channel", "general", "--since", "2025-01-01"}, at...)...)
	if code != 0 || !strings.Contains(out, "nothing was said in general since 2025-01-01") {
		t.Errorf("empty catchup: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = c.run(append([]string{"catchup", "--channel", "general", "--since", "2024-04-01", "--until", "2024-04-30"}, at...)...)
	if code != 0 || !strings.Contains(out, "nothing was said in general from 2024-04-01 to 2024-04-30") {
		t.Errorf("catchup of April: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = c.run(append([]string{"catchup", "--channel", "general", "--since", "2024-04-01", "--until", "2024-05-01"}, at...)...)
	if code != 0 || strings.Count(out, "conversation ") != 1 || !strings.Contains(out, "2024-05-01") {
		t.Errorf("catchup until 2024-05-01, which takes in its day: exit %d\n%s%s", code, out, errs)
	}
	if _, errs, code := c.run(append([]string{"catchup", "--channel", "general", "--until", "banana"}, at...)...); code != 1 || !strings.Contains(errs, `catchup: --until: "banana" is not a time`) {
		t.Errorf("catchup --until banana: exit %d\n%s", code, errs)
	}
	if _, errs, code := c.run(append([]string{"catchup", "--channel", "random"}, at...)...); code != 1 || !strings.Contains(errs, `no channel is named "random" (channels with messages: #general)`) {
		t.Errorf("catchup of an unknown channel: exit %d\n%s", code, errs)
	}
	// A question narrowed as a search is: channels by name, authors, time.
	out, errs, code = c.run(append([]string{"query", "who shared the tsconfig?", "--channel", "general", "--since", "2024-05-01"}, at...)...)
	if code != 0 || !strings.Contains(out, "[1] ") || !strings.Contains(out, "#general") || !strings.Contains(out, "tsconfig") {
		t.Errorf("query --channel general --since 2024-05-01: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = c.run(append([]string{"query", "who shared the tsconfig?", "--since", "2025-01-01"}, at...)...)
	if code != 0 || !strings.Contains(out, "no conversation matched") || strings.Contains(out, "[1] ") {
		t.Errorf("query --since 2025-01-01: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = c.run(append([]string{"query", "who shared the tsconfig?", "--author", "1"}, at...)...)
	if code != 0 || !strings.Contains(out, "no conversation matched") {
		t.Errorf("query --author of no one: exit %d\n%s%s", code, out, errs)
	}
	for _, tt := range []struct{ flag, value, want string }{
		{"--channel", "random", `no channel is named "random"`},
		{"--author", "bob", `query: --author: "bob" is not a member's ID`},
		{"--until", "banana", `query: --until: "banana" is not a time`},
	} {
		if _, errs, code := c.run(append([]string{"query", "tsconfig", tt.flag, tt.value}, at...)...); code != 1 || !strings.Contains(errs, tt.want) {
			t.Errorf("query %s %s: exit %d\n%s", tt.flag, tt.value, code, errs)
		}
	}

	// Help on stdout, exit 0; its own flags before the global ones.
	out, errs, code = c.run("search", "-h")
	own, global := strings.Index(out, "--mode"), strings.Index(out, "GLOBAL FLAGS")
	if code != 0 || errs != "" || own < 0 || global < own || strings.Index(out, "--aliases") < global {
		t.Errorf("search -h: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	if out, _, code := c.run("model", "init", "-h"); code != 0 || !strings.Contains(out, "searchd model init DIR") {
		t.Errorf("model init -h: exit %d\n%s", code, out)
	}
	// A mistake in flags: one line, exit 2.
	_, errs, code = c.run("search", "x", "--bogus")
	if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "-bogus") || !strings.Contains(errs, "searchd search -h") {
		t.Errorf("unknown flag: exit %d\n%s", code, errs)
	}
	c.env = append(c.env, "DSEARCH_GAP=banana")
	_, errs, code = c.run("stats", "--data", data)
	if code != 2 || !strings.Contains(errs, "a duration such as") {
		t.Errorf("DSEARCH_GAP=banana: exit %d\n%s", code, errs)
	}
	c.env = c.env[:len(c.env)-1]
	for _, v := range [][]string{{"--version"}, {"version"}} {
		if out, _, code := c.run(v...); code != 0 || !strings.HasPrefix(out, "searchd ") {
			t.Errorf("%v: exit %d, %q", v, code, out)
		}
	}

	if _, errs, code := c.run("stats", "--data", data, "extra"); code != 2 || !strings.Contains(errs, `stats takes no arguments, only flags: ["extra"]`) {
		t.Errorf("stats extra: exit %d\n%s", code, errs)
	}

	// A typo in --data creates nothing; a named config must exist, and its
	// errors name the file and line.
	typo := filepath.Join(dir, "dta")
	if _, errs, code := c.run("stats", "--data", typo); code != 1 || !strings.Contains(errs, "no database in") {
		t.Errorf("stats --data typo: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(typo); err == nil {
		t.Errorf("stats --data %s created it", typo)
	}
	if _, errs, code := c.run("stats", "--data", data, "--config", filepath.Join(dir, "nope")); code != 2 || !strings.Contains(errs, "--config") {
		t.Errorf("missing --config: exit %d\n%s", code, errs)
	}
	cfgFile := filepath.Join(dir, "config")
	writeFile(t, cfgFile, []byte("# mine\ngap 45m\nbusy-span soon\n"))
	if _, errs, code := c.run("stats", "--data", data, "--config", cfgFile); code != 2 || !strings.Contains(errs, cfgFile+":3:") {
		t.Errorf("bad config line: exit %d\n%s", code, errs)
	}
}

// TestCLIModelErrors: a wrong --model says what to do, not to run a
// command that fails too.
func TestCLIModelErrors(t *testing.T) {
	c := buildCLI(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeFile(t, filepath.Join(dir, "x", "general.json"), realExportFile(t))
	if out, errs, code := c.run("import", "--data", data, filepath.Join(dir, "x")); code != 0 {
		t.Fatalf("import: %s%s", out, errs)
	}
	model := filepath.Join(dir, "model")
	writeFile(t, filepath.Join(model, "model.onnx"), []byte("not really"))
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o700)
	for _, tc := range []struct{ model, want string }{
		{filepath.Join(model, "model.onnx"), "--model takes the model's directory"},
		{filepath.Join(dir, "modle"), "does not exist: check --model"},
		{empty, "holds no model (no .onnx file): `make model`"},
		{model, "searchd model init " + model + " --name NAME --dimension N"},
	} {
		_, errs, code := c.run("embed", "--data", data, "--model", tc.model)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("--model %s: exit %d\n%s", tc.model, code, errs)
		}
	}
}

// A user who names only files that are not DiscordChatExporter exports
// (Discord's own data package: messages/c…/messages.json, channel.json)
// imported nothing: the import says so and fails, as for a folder
// without JSON, instead of exiting 0.
func TestCLIImportOfNoExportFails(t *testing.T) {
	c := buildCLI(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	pkg := filepath.Join(dir, "package", "messages", "c880000000000000010")
	writeFile(t, filepath.Join(pkg, "messages.json"), []byte(`[{"ID": 880000000000000100, "Timestamp": "2024-05-01 09:00:00", "Contents": "hi", "Attachments": ""}]`))
	writeFile(t, filepath.Join(pkg, "channel.json"), []byte(`{"id": "880000000000000010", "type": 0, "name": "general"}`))
	for _, args := range [][]string{{filepath.Join(dir, "package")}, {filepath.Join(pkg, "messages.json")}} {
		out, errs, code := c.run(append([]string{"import", "--data", data}, args...)...)
		if code != 1 || !strings.Contains(out, "skipped, not a DiscordChatExporter export") || !strings.Contains(errs, "--format Json") {
			t.Errorf("import %v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	// Beside an export, a stray JSON file is skipped and the import succeeds.
	writeFile(t, filepath.Join(dir, "package", "Study Group - general [880000000000000010].json"), realExportFile(t))
	if out, errs, code := c.run("import", "--data", data, filepath.Join(dir, "package")); code != 0 || !strings.Contains(out, "imported 8 new") {
		t.Errorf("import of an export beside stray JSON: exit %d\n%s%s", code, out, errs)
	}
}
