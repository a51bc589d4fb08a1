package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The launchd agent and systemd unit run the bot with flags it defines.
func TestDeployCommandLines(t *testing.T) {
	replacer := strings.NewReplacer("@BIN@", "/opt/dsearch/bin", "@SOCKET@", "/home/u/run/searchd.sock",
		"@TOKEN_FILE@", "/home/u/.config/dsearch/discord-token", "@DATA@", "/home/u/data", "@LOGS@", "/home/u/logs")
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return replacer.Replace(string(b))
	}
	var lines [][]string
	plist := read(filepath.Join("..", "..", "..", "deploy", "launchd", "com.dsearch.bot.plist.in"))
	args := regexp.MustCompile(`(?s)<key>ProgramArguments</key>\s*<array>(.*?)</array>`).FindStringSubmatch(plist)
	if args == nil {
		t.Fatal("the bot's plist has no ProgramArguments")
	}
	var plistArgs []string
	for _, m := range regexp.MustCompile(`<string>(.*?)</string>`).FindAllStringSubmatch(args[1], -1) {
		plistArgs = append(plistArgs, m[1])
	}
	lines = append(lines, plistArgs)
	unit := read(filepath.Join("..", "..", "..", "deploy", "systemd", "dsearch-bot.service.in"))
	exec := regexp.MustCompile(`(?m)^ExecStart=(.*)$`).FindStringSubmatch(unit)
	if exec == nil {
		t.Fatal("the bot's unit has no ExecStart")
	}
	lines = append(lines, strings.Fields(strings.ReplaceAll(exec[1], "%t", "/run/user/1000")))
	for _, l := range lines {
		if filepath.Base(l[0]) != "dsearch-bot" {
			t.Errorf("runs %s", l[0])
		}
		fs, _ := newFlags()
		if err := fs.Parse(l[1:]); err != nil {
			t.Errorf("%q: %v", l, err)
		}
		if fs.NArg() != 0 {
			t.Errorf("%q: stray arguments %q", l, fs.Args())
		}
	}
	for name, text := range map[string]string{"plist": plist, "unit": unit} {
		if !strings.Contains(text, "DSEARCH_TOKEN_FILE") || strings.Contains(text, "DSEARCH_TOKEN=") {
			t.Errorf("%s: the token must come from DSEARCH_TOKEN_FILE", name)
		}
	}
}

func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	os.WriteFile(path, []byte("Bot abc.def\n"), 0o644)
	t.Setenv("DSEARCH_TOKEN_FILE", path)
	if _, err := readToken(); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable token file: %v", err)
	}
	os.Chmod(path, 0o600)
	if tok, err := readToken(); err != nil || tok != "abc.def" {
		t.Errorf("token %q, %v", tok, err)
	}
	t.Setenv("DSEARCH_TOKEN_FILE", "")
	t.Setenv("DSEARCH_TOKEN", "")
	if _, err := readToken(); err == nil || !strings.Contains(err.Error(), "DSEARCH_TOKEN_FILE") {
		t.Errorf("no token: %v", err)
	}
}
