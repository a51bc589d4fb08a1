package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dsearch/searchd/llm/llmtest"
)

func TestMain(m *testing.M) { llmtest.Main(m) }

// searchd doctor against a real Ollama: its version and the model, or
// the missing model and how to get it; the same over the OpenAI API.
func TestDoctorRealOllama(t *testing.T) {
	url := llmtest.URL(t)
	dir := t.TempDir()
	data := importSample(t, dir)
	doctor := func(args ...string) string {
		out, _ := run(t, append([]string{"doctor", "--data", data, "--embed-backend", "go", "--ollama-url", url,
			"--socket", filepath.Join(dir, "run", "s.sock")}, args...)...)
		return out
	}
	out := doctor("--ollama-model", llmtest.English)
	if !regexp.MustCompile(`Ollama \d+\.\d+\.\d+ at ` + regexp.QuoteMeta(url) + ` has ` + llmtest.English).MatchString(out) {
		t.Errorf("doctor with the model there:\n%s", out)
	}
	if out := doctor("--ollama-model", "nosuch:1b"); !strings.Contains(out, "does not have nosuch:1b (fix: ollama pull nosuch:1b)") {
		t.Errorf("doctor with the model missing:\n%s", out)
	}
	if out := doctor("--llm-api", "openai", "--ollama-model", llmtest.Multilingual); !strings.Contains(out, "OpenAI-compatible server at "+url+" has "+llmtest.Multilingual) {
		t.Errorf("doctor over the OpenAI API:\n%s", out)
	}
	if out := doctor("--llm-api", "openai", "--ollama-model", "nosuch:1b"); !strings.Contains(out, "does not serve nosuch:1b") {
		t.Errorf("doctor over the OpenAI API, model missing:\n%s", out)
	}
}

// searchd query end to end: serve with a real model, ask over the socket,
// get a plan (the model's or the rules'), results and an answer or why
// not; the daemon's logs carry no message text.
func TestQueryRealOllama(t *testing.T) {
	url := llmtest.URL(t)
	dir := shortTemp(t)
	data := importSample(t, dir)
	sock := filepath.Join(dir, "run", "s.sock")
	for _, c := range []struct{ api, model, q string }{
		{"ollama", llmtest.Multilingual, "민수가 이사 간다고 한 게 언제였지?"},
		{"openai", llmtest.English, "who is moving to a new place?"},
	} {
		// Timeouts for a loaded machine, within the 3 minutes searchd query waits.
		d := startServe(t, sock, "--data", data, "--llm=true", "--llm-api", c.api, "--ollama-url", url, "--ollama-model", c.model,
			"--plan-timeout", "90s", "--summary-timeout", "80s")
		out, err := run(t, "query", "--socket", sock, c.q)
		if err != nil {
			t.Fatalf("%s query: %v\n%s", c.model, err, out)
		}
		t.Logf("%s over %s:\n%s", c.model, c.api, out)
		if !regexp.MustCompile(`^plan \((llm|rules)\): `).MatchString(out) || !strings.Contains(out, "\n[1] ") {
			t.Errorf("%s: no plan or no results:\n%s", c.model, out)
		}
		if strings.HasPrefix(out, "plan (rules)") && !strings.Contains(out, "\n  (LLM plan: ") {
			t.Errorf("%s: a rules plan without why the model's was not taken:\n%s", c.model, out)
		}
		if strings.Contains(out, "(no answer:") && !regexp.MustCompile(`cited \[|cites no result|nothing but its citations|repeats itself|repeats the prompt|copies out|language of|script|names a year`).MatchString(out) {
			t.Errorf("%s: a live model gave no answer:\n%s", c.model, out)
		}
		if err := d.stop(); err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"이사", "moving"} {
			if strings.Contains(d.logs.String(), secret) {
				t.Errorf("serve logs carry %q:\n%s", secret, d.logs)
			}
		}
	}
}
