package nice

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Process lowers every thread to nice 10, those started after
// it too. It runs in a child process: the change cannot be
// undone without privileges.
func TestProcess(t *testing.T) {
	if os.Getenv("DSEARCH_TEST_LOWER_PRIORITY") == "1" {
		Process()
		// Start threads after it: each locked goroutine needs its own.
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				runtime.LockOSThread()
				wg.Done()
				select {}
			}()
		}
		wg.Wait()
		tasks, _ := filepath.Glob("/proc/self/task/*/stat")
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			// Fields after the command's closing parenthesis: nice is the 17th.
			fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
			os.Stdout.WriteString(fields[16] + "\n")
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcess$")
	cmd.Env = append(os.Environ(), "DSEARCH_TEST_LOWER_PRIORITY=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	nices := strings.Fields(string(out))
	if len(nices) < 5 {
		t.Fatalf("read %d threads, want the 4 started after and the rest: %q", len(nices), out)
	}
	for _, n := range nices {
		if n != "10" {
			t.Errorf("a thread at nice %s, want 10: %q", n, nices)
		}
	}
}
