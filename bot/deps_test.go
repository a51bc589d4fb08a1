package bot

import (
	"os/exec"
	"strings"
	"testing"
)

// The bot talks to searchd only over the socket: it must never link the
// heavy or private machinery (embeddings, the database, the LLM).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{"knights-analytics/hugot", "onnxruntime", "sqlite", "tmc/langchaingo", "dsearch/searchd"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.Contains(dep, f) {
				t.Errorf("bot depends on %s", dep)
			}
		}
	}
	if !strings.Contains(string(out), "dsearch/shared/client") {
		t.Error("go list found no dependency on the shared client; the check is not looking at the bot")
	}
}
