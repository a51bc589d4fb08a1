package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --page-size outside 1–25, or --spool-max-mb below 1, is refused at
// start: taken, every /query failed with searchd's 400 (over 50), a page
// of more than an embed's 25 fields showed 25 and More went on after the
// rest (over 25), and a negative spool bound refused every live event.
func TestBadNumbersRefusedAtStart(t *testing.T) {
	t.Setenv("DSEARCH_TOKEN", "")
	t.Setenv("DSEARCH_TOKEN_FILE", "")
	for _, args := range [][]string{{"--page-size", "-5"}, {"--page-size", "26"}, {"--spool-max-mb", "-1"}} {
		err := run(append(args, "--data", t.TempDir()), io.Discard)
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: %v, want an error naming %s", args, err, args[0])
		}
	}
}

// docs/bot.md: --data and --socket default "as searchd's", which reads
// them from ~/.config/dsearch/config (docs/install.md): so does the bot.
func TestBotFollowsSearchdConfigFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("DSEARCH_DATA", "")
	t.Setenv("DSEARCH_SOCKET", "")
	data := filepath.Join(t.TempDir(), "mydata")
	if err := os.MkdirAll(filepath.Join(home, ".config", "dsearch"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "dsearch", "config"), []byte("data "+data+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := run([]string{"--check"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), data) {
		t.Errorf("--check looked for searchd at: %v; searchd itself uses %s/run/searchd.sock", err, data)
	}
}
