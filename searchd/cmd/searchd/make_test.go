package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// makefileDir is a scratch directory holding the project's Makefile alone,
// to run make in against stand-ins; it skips without make.
func makefileDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	mk, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), mk, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Every documented sequence that fetches ONNX Runtime builds searchd with
// it, though build/deps.mk is written during the same make run. The
// Makefile runs here against stand-ins: a deps.sh that writes deps.mk as
// the real one does, a model.sh that does nothing, and a go that records
// how it was called.
func TestMakeDepsBuildUsesORT(t *testing.T) {
	for _, goals := range [][]string{{"deps", "build"}, {"deps", "model", "build"}} {
		dir := makefileDir(t)
		os.Mkdir(filepath.Join(dir, "scripts"), 0o700)
		script := func(name, body string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		script("scripts/deps.sh", "mkdir -p build && printf 'ORT_LIB_DIR := /ort\\nTOKENIZERS_LIB_DIR := /tok\\n' > build/deps.mk\n")
		script("scripts/model.sh", "true\n")
		script("go", `echo "CGO_LDFLAGS=$CGO_LDFLAGS $*" >> "$(dirname "$0")/go.log"`+"\n")
		cmd := exec.Command("make", append([]string{"GO=" + filepath.Join(dir, "go")}, goals...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "DSEARCH_CACHE="+filepath.Join(dir, "cache"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %v: %v\n%s", goals, err, out)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "go.log"))
		var searchd string
		for _, line := range strings.Split(string(log), "\n") {
			if strings.Contains(line, "-o bin/searchd ") {
				searchd = line
			}
		}
		if !strings.Contains(searchd, "-tags ORT") || !strings.Contains(searchd, "CGO_LDFLAGS=-L/tok") ||
			!strings.Contains(searchd, "main.defaultORTLibrary=/ort") {
			t.Errorf("make %s built searchd without ONNX Runtime:\n%s", strings.Join(goals, " "), log)
		}
	}
}

// With make ollama's build/ollama.mk, make run and make demo start a
// private Ollama with the small multilingual model, unless the user's
// OLLAMA_HOST names one; without it they use OLLAMA_HOST or the default.
func TestMakeRunPrivateOllama(t *testing.T) {
	for _, c := range []struct {
		name, ollamaMk, host string
		want, not            []string
	}{
		{"private", "OLLAMA_BIN := /c/ollama\nOLLAMA_MODELS_DIR := /c/models\n", "",
			[]string{"scripts/ollama-serve.sh /c/ollama /c/models", "--ollama-model gemma3:270m", "--plan-timeout 60s", `kill $ollama_pid`}, nil},
		{"the user's", "OLLAMA_BIN := /c/ollama\nOLLAMA_MODELS_DIR := /c/models\n", "127.0.0.1:9",
			[]string{"--ollama-model exaone3.5:7.8b", "--plan-timeout 5s"}, []string{"ollama-serve.sh"}},
		{"none built", "", "",
			[]string{"--ollama-url ${OLLAMA_HOST:-http://127.0.0.1:11434}", "--ollama-model exaone3.5:7.8b"}, []string{"ollama-serve.sh"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := makefileDir(t)
			os.Mkdir(filepath.Join(dir, "build"), 0o700)
			if c.ollamaMk != "" {
				os.WriteFile(filepath.Join(dir, "build", "ollama.mk"), []byte(c.ollamaMk), 0o600)
			}
			for _, goal := range []string{"run", "demo-run"} {
				cmd := exec.Command("make", "-n", "GO=true", goal)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "OLLAMA_HOST="+c.host, "DSEARCH_CACHE="+filepath.Join(dir, "cache"))
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("make -n %s: %v\n%s", goal, err, out)
				}
				for _, w := range c.want {
					if !strings.Contains(string(out), w) {
						t.Errorf("make %s lacks %q:\n%s", goal, w, out)
					}
				}
				for _, w := range c.not {
					if strings.Contains(string(out), w) {
						t.Errorf("make %s has %q:\n%s", goal, w, out)
					}
				}
			}
		})
	}
}
