package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doctor states where the LLM is and never shows the URL's user,
// password or token; a server off loopback without --llm-remote is a
// failure, decided from the address alone (nothing is dialled).
func TestDoctorLLMEndpoint(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	doctor := func(args ...string) string {
		out, _ := run(t, append([]string{"doctor", "--data", data, "--embed-backend", "go", "--socket", filepath.Join(dir, "run", "s.sock")}, args...)...)
		return out
	}
	out := doctor("--ollama-url", "http://alice:s3cretpw@"+dead+"/?key=tok123")
	for _, secret := range []string{"alice", "s3cretpw", "tok123"} {
		if strings.Contains(out, secret) {
			t.Errorf("doctor shows %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "LLM endpoint http://"+dead+"/: loopback only, no proxy") || !strings.Contains(out, "not reachable") {
		t.Errorf("doctor on a loopback LLM:\n%s", out)
	}
	out = doctor("--ollama-url", "http://192.0.2.10:11434")
	if !strings.Contains(out, "LLM endpoint: the LLM server is not on this machine") || !strings.Contains(out, "--llm-remote") {
		t.Errorf("doctor on a remote LLM without --llm-remote:\n%s", out)
	}
	// serve refuses it at start, with the same words.
	if out, err := run(t, "serve", "--data", data, "--embed-backend", "go", "--socket", filepath.Join(dir, "run", "s.sock"),
		"--ollama-url", "http://192.0.2.10:11434"); err == nil || !strings.Contains(out+err.Error(), "--llm-remote") {
		t.Errorf("serve with a remote LLM and no --llm-remote: %v\n%s", err, out)
	}
}

// doctor counts the bot's batches, not whatever else ends in .json in
// its spool (the bot's own files, a person's notes or copies).
func TestDoctorCountsOnlySpoolBatches(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	spool := filepath.Join(data, "bot-spool")
	os.MkdirAll(filepath.Join(spool, "rejected"), 0o700)
	os.Chmod(data, 0o700)
	for _, p := range []string{"00000000000000000003.json", "notes.json", "rejected/copy-of-7.json"} {
		os.WriteFile(filepath.Join(spool, p), []byte(`{}`), 0o600)
	}
	out, _ := run(t, "doctor", "--data", data, "--llm=false", "--embed-backend", "go", "--socket", filepath.Join(dir, "run", "s.sock"))
	if !strings.Contains(out, "1 batches from the bot wait") || strings.Contains(out, "refused") {
		t.Errorf("doctor with one batch and two stray files:\n%s", out)
	}
}
