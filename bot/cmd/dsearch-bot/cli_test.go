package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpAndVersion runs the binary as a user does: -h is not an error.
func TestHelpAndVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "dsearch-bot")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"HOME=" + t.TempDir()}
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			return o.String(), e.String(), xe.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), 0
	}
	for _, h := range []string{"-h", "--help"} {
		out, errs, code := run(h)
		if code != 0 || errs != "" || !strings.Contains(out, "Usage: dsearch-bot [flags]") || !strings.Contains(out, "-backfill") {
			t.Errorf("%s: exit %d\nstdout %s\nstderr %s", h, code, out, errs)
		}
	}
	if out, _, code := run("--version"); code != 0 || !strings.HasPrefix(out, "dsearch-bot ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	if _, errs, code := run("--bogus"); code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "-bogus") {
		t.Errorf("--bogus: exit %d, stderr %q", code, errs)
	}
	if _, errs, code := run("search", "this"); code != 2 || !strings.Contains(errs, "takes only flags") {
		t.Errorf("stray arguments: exit %d, stderr %q", code, errs)
	}
}
