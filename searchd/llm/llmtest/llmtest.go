// Package llmtest runs a real Ollama for tests: the binary and models
// directory `make ollama` built (DSEARCH_TEST_OLLAMA and
// DSEARCH_TEST_OLLAMA_MODELS, set by `make test`), served on a loopback
// port of its own choosing for one test binary and stopped when it ends.
package llmtest

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The models `make ollama` imports.
const (
	English      = "smollm2:135m" // SmolLM2 135M Instruct Q4_1
	Multilingual = "gemma3:270m"  // Gemma 3 270M Q4_K_M
)

var (
	once    sync.Once
	url     string
	cmd     *exec.Cmd
	logs    *os.File
	started error
)

// Main runs the tests and then stops the server, if one was started:
// call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if cmd != nil {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		os.Remove(logs.Name())
	}
	os.Exit(code)
}

// URL returns the real server's URL, starting it on first use. Without
// DSEARCH_TEST_OLLAMA the test is skipped, saying how to get one; with
// it, a server that does not come up fails the test.
func URL(t testing.TB) string {
	t.Helper()
	bin, models := os.Getenv("DSEARCH_TEST_OLLAMA"), os.Getenv("DSEARCH_TEST_OLLAMA_MODELS")
	if bin == "" || models == "" {
		t.Skip("no real Ollama: DSEARCH_TEST_OLLAMA and DSEARCH_TEST_OLLAMA_MODELS unset (make test builds one with make ollama)")
	}
	once.Do(func() { started = start(bin, models) })
	if started != nil {
		t.Fatalf("real Ollama: %v", started)
	}
	return url
}

// listening is Ollama's log line naming the address it holds.
var listening = regexp.MustCompile(`Listening on (127\.0\.0\.1:[1-9][0-9]*)`)

// start runs Ollama on port 0 and reads the port it got from its log: a
// port picked free here could be taken by another process before Ollama
// binds it, and the tests would talk to that process instead.
func start(bin, models string) error {
	var err error
	if logs, err = os.CreateTemp("", "ollama-test-*.log"); err != nil {
		return err
	}
	cmd = exec.Command(bin, "serve")
	// Its own models, no telemetry of any kind, one model at a time.
	cmd.Env = append(os.Environ(), "OLLAMA_HOST=127.0.0.1:0", "OLLAMA_MODELS="+models,
		"OLLAMA_NOPRUNE=1", "OLLAMA_MAX_LOADED_MODELS=2", "OLLAMA_KEEP_ALIVE=10m")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return err
	}
	for i := 0; i < 150; i++ {
		b, _ := os.ReadFile(logs.Name())
		if m := listening.FindSubmatch(b); m != nil {
			url = "http://" + string(m[1])
			if resp, err := http.Get(url + "/api/version"); err == nil {
				resp.Body.Close()
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(logs.Name())
	return fmt.Errorf("%s serve did not answer:\n%s", bin, tail(string(b)))
}

func tail(s string) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}
