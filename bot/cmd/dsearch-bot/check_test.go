package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"dsearch/shared/api"
)

// --check talks only to a daemon the server's own rules would trust: a
// look-alike behind a socket in a directory others may enter gets no
// request (the bot would otherwise send it every message).
func TestCheckRefusesUntrustedSearchd(t *testing.T) {
	var asked atomic.Int32
	dir, sock := fakeSearchd(t, &asked)
	os.Chmod(dir, 0o755)
	var out bytes.Buffer
	if err := run([]string{"--check", "--socket", sock}, &out); err == nil || !strings.Contains(err.Error(), "refusing to talk to searchd") {
		t.Errorf("--check on an open directory: %v, %s", err, &out)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the untrusted daemon was asked %d times", n)
	}
	os.Chmod(dir, 0o700)
	out.Reset()
	if err := run([]string{"--check", "--socket", sock}, &out); err != nil || !strings.Contains(out.String(), "searchd test is up") {
		t.Errorf("--check on our own daemon: %v, %s", err, &out)
	}
}

// --check counts the batches waiting in the spool, not whatever else
// ends in .json there (a person's notes, a copy).
func TestCheckCountsOnlyBatches(t *testing.T) {
	dir, sock := fakeSearchd(t, nil)
	spoolDir := filepath.Join(dir, "spool")
	os.MkdirAll(spoolDir, 0o700)
	for _, name := range []string{"00000000000000000007.json", "notes.json", "backup-00000000000000000001.json"} {
		os.WriteFile(filepath.Join(spoolDir, name), []byte(`{}`), 0o600)
	}
	var out bytes.Buffer
	if err := run([]string{"--check", "--socket", sock, "--spool", spoolDir}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1 batches wait") {
		t.Errorf("--check with one batch and two stray files: %s", &out)
	}
}

// --check reports what the bot left in its status file: a fatal gateway
// close fails it; channels left incomplete and spool failures are listed
// (issues 24.2, 24.3, 24.8).
func TestCheckReportsBotStatus(t *testing.T) {
	dir, sock := fakeSearchd(t, nil)
	spoolDir := filepath.Join(dir, "spool")
	os.MkdirAll(spoolDir, 0o700)
	write := func(st api.BotStatus) {
		b, _ := json.Marshal(st)
		if err := os.WriteFile(filepath.Join(spoolDir, api.BotStatusFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	write(api.BotStatus{SpoolFailures: 7, LastSpoolFailure: "no space left on device", LastSpoolFailAt: &now,
		Incomplete: []api.IncompleteChannel{{Channel: 2001, Guild: 1000, Name: "staff", Why: "Discord: 502 Bad Gateway", Retrying: true}}})
	var out bytes.Buffer
	if err := run([]string{"--check", "--socket", sock, "--spool", spoolDir}, &out); err != nil {
		t.Errorf("--check with incomplete channels: %v", err)
	}
	for _, want := range []string{"channel 2001 (#staff, server 1000) is not fully synced: Discord: 502 Bad Gateway", "keeps trying",
		"could not take 7 events", "no space left on device"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--check output lacks %q:\n%s", want, &out)
		}
	}
	write(api.BotStatus{Stopped: "Discord closed the gateway with code 4014, disallowed intents: turn on Message Content Intent", StoppedAt: &now})
	out.Reset()
	if err := run([]string{"--check", "--socket", sock, "--spool", spoolDir}, &out); err == nil || !strings.Contains(err.Error(), "4014") {
		t.Errorf("--check after a fatal close: %v\n%s", err, &out)
	}
}

// --check before the bot ever connected to Discord with this spool (a
// first set-up, or --check given another --data or --spool than the
// bot's service) said only "searchd … is up", which reads as "the bot
// is well". The bot writes its status file at every connection, so its
// absence says the bot has not connected: --check says so, and where it
// looked (exit 0: `make demo` runs it with no bot).
func TestCheckSaysWhenTheBotNeverConnected(t *testing.T) {
	dir, sock := fakeSearchd(t, nil)
	spoolDir := filepath.Join(dir, "spool")
	var out bytes.Buffer
	if err := run([]string{"--check", "--socket", sock, "--spool", spoolDir}, &out); err != nil {
		t.Errorf("--check before the bot's first start: %v", err)
	}
	if !strings.Contains(out.String(), "has not connected to Discord") || !strings.Contains(out.String(), spoolDir) {
		t.Errorf("--check before the bot's first start:\n%s\nwant it to say the bot has not connected, naming the spool", &out)
	}
}
