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
