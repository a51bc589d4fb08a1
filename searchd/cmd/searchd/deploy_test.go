package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// render fills a deploy template as the Makefile's sed does.
func render(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer("@BIN@", "/opt/dsearch/bin", "@DATA@", "/home/u/.local/share/dsearch",
		"@SOCKET@", "/home/u/.local/share/dsearch/run/searchd.sock", "@MODEL@", "/home/u/models/bge-m3",
		"@OLLAMA@", "http://127.0.0.1:11434", "@LOGS@", "/home/u/Library/Logs/dsearch",
		"@TOKEN_FILE@", "/home/u/.config/dsearch/discord-token").Replace(string(b))
}

// checkArgs requires a command line to run a binary the Makefile builds,
// and, for searchd, a real subcommand with flags it defines.
func checkArgs(t *testing.T, file string, args []string) {
	t.Helper()
	switch filepath.Base(args[0]) {
	case "dsearch-bot":
		return
	case "searchd":
	default:
		t.Errorf("%s runs %s, which make build does not build", file, args[0])
		return
	}
	var cmd *ffcli.Command
	for _, c := range NewMain().subcommands() {
		if c.Name == args[1] {
			cmd = c
		}
	}
	if cmd == nil {
		t.Fatalf("%s: searchd has no subcommand %q", file, args[1])
	}
	args = args[1:]
	for len(args) > 1 { // eval retrieval ...
		var sub *ffcli.Command
		for _, c := range cmd.Subcommands {
			if c.Name == args[1] {
				sub = c
			}
		}
		if sub == nil {
			break
		}
		cmd, args = sub, args[1:]
	}
	args = append([]string{"searchd"}, args...)
	for _, a := range args[2:] {
		if name, ok := strings.CutPrefix(a, "--"); ok {
			if cmd.FlagSet.Lookup(name) == nil {
				t.Errorf("%s: searchd %s has no flag --%s", file, args[1], name)
			}
		}
	}
	if err := cmd.FlagSet.Parse(args[2:]); err != nil {
		t.Errorf("%s: %v", file, err)
	}
}

func TestLaunchdPlists(t *testing.T) {
	files, _ := filepath.Glob("../../../deploy/launchd/*.plist.in")
	if len(files) != 2 {
		t.Fatalf("found %d plists", len(files))
	}
	for _, f := range files {
		var doc struct {
			XMLName xml.Name `xml:"plist"`
			Dict    struct {
				Items []struct {
					XMLName xml.Name
					Value   string     `xml:",chardata"`
					Strings []string   `xml:"string"`
					Inner   []xml.Name `xml:",any"`
				} `xml:",any"`
			} `xml:"dict"`
		}
		if err := xml.Unmarshal([]byte(render(t, f)), &doc); err != nil {
			t.Fatalf("%s is not a property list: %v", f, err)
		}
		keys := map[string]int{}
		items := doc.Dict.Items
		for i := 0; i+1 < len(items); i += 2 {
			if items[i].XMLName.Local != "key" {
				t.Fatalf("%s: expected a key at item %d, found %s", f, i, items[i].XMLName.Local)
			}
			keys[items[i].Value] = i + 1
		}
		for _, k := range []string{"Label", "ProgramArguments", "RunAtLoad", "KeepAlive", "ThrottleInterval", "StandardErrorPath"} {
			if _, ok := keys[k]; !ok {
				t.Errorf("%s lacks %s", f, k)
			}
		}
		if items[keys["KeepAlive"]].XMLName.Local != "true" || !strings.Contains(items[keys["StandardErrorPath"]].Value, "Library/Logs/dsearch") {
			t.Errorf("%s: KeepAlive or log path wrong", f)
		}
		checkArgs(t, f, items[keys["ProgramArguments"]].Strings)
	}
}

func TestSystemdUnits(t *testing.T) {
	files, _ := filepath.Glob("../../../deploy/systemd/*.service.in")
	if len(files) != 2 {
		t.Fatalf("found %d units", len(files))
	}
	for _, f := range files {
		unit := render(t, f)
		var exec string
		for _, line := range strings.Split(unit, "\n") {
			if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
				exec = strings.ReplaceAll(v, "%t", "/run/user/1000")
			}
		}
		if exec == "" || strings.Contains(unit, "@") {
			t.Fatalf("%s: no ExecStart, or a placeholder left:\n%s", f, unit)
		}
		checkArgs(t, f, strings.Fields(exec))
		if strings.Contains(f, "searchd") && (!strings.Contains(unit, "RuntimeDirectoryMode=0700") || !strings.Contains(unit, "KillSignal=SIGINT")) {
			t.Errorf("%s: the socket directory must be 0700 and stops graceful", f)
		}
		if strings.Contains(f, "bot") && (!strings.Contains(unit, "After=dsearch-searchd.service") || !strings.Contains(unit, "Restart=always")) {
			t.Errorf("%s: the bot must start after searchd and ride out its restarts", f)
		}
	}
}

// The README's commands run as written: every searchd line names a real
// subcommand and flags, and curl uses the socket searchd reports, not a
// guess at $XDG_RUNTIME_DIR (unset on macOS and many Linux machines).
func TestReadmeCommands(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "curl ") && strings.Contains(line, "XDG_RUNTIME_DIR") {
			t.Errorf("README: curl guesses the socket: %s", line)
		}
		if i := strings.Index(line, "bin/searchd "); i >= 0 && (i == 0 || strings.HasPrefix(line[i-2:], "$(")) {
			cmd, _, _ := strings.Cut(line[i:], "#")
			cmd, _, _ = strings.Cut(cmd, ")")
			args := strings.Fields(cmd)
			for j, a := range args { // one quoted argument may hold spaces; flags never do
				if strings.HasPrefix(a, "\"") || strings.HasPrefix(a, "'") {
					args = args[:j]
					break
				}
			}
			checkArgs(t, "README.md", args)
			n++
		}
	}
	if n < 5 {
		t.Fatalf("found %d searchd commands in the README; the test is not reading it", n)
	}
}
