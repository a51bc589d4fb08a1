package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A named pipe called *.json is not listed (opening it blocked the import
// for good, past SIGTERM), and the listing says why it was skipped.
func TestFilesSkipsNamedPipe(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, paths := range [][]string{{dir}, {pipe, filepath.Join(dir, "ok.json")}} {
		l, err := Files(paths)
		if len(l.Files) != 1 || filepath.Base(l.Files[0]) != "ok.json" {
			t.Errorf("Files(%v) listed %v", paths, l.Files)
		}
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Files(%v): %v, want the pipe named as skipped", paths, err)
		}
	}
}
