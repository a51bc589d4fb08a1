package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A socket directory others may enter (a newcomer's chmod 755, a wrong
// umask) makes the bot refuse to talk to searchd, rightly. The member
// who asked got that refusal itself, untranslated: the operator's
// socket path and the directory's mode and owner, in Discord. They get
// one plain line in their language; the details go to the bot's log.
func TestUnsafeSocketDirectoryIsOnePlainLine(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	// A new connection is checked (one kept open stays trusted): searchd
	// restarted, then its directory opened.
	e.sd.stop()
	e.sd.start()
	dir := filepath.Dir(e.sd.sock)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)

	_, edit, _ := e.interaction(alice, 2, query("boiler"))
	got, _ := edit["content"].(string)
	if strings.Contains(got, dir) || !strings.Contains(got, "bot's log") {
		t.Errorf("a question while the socket's directory is open: %q\nwant one plain line without the socket's path", got)
	}
	e.locale = "ko"
	_, edit, _ = e.interaction(alice, 2, query("보일러"))
	if got, _ := edit["content"].(string); strings.Contains(got, dir) || strings.Contains(got, "refusing") {
		t.Errorf("Korean member: %q\nwant the line in Korean", got)
	}
	if !strings.Contains(e.log.String(), "refusing to talk to searchd") {
		t.Errorf("the bot's log does not say why:\n%s", e.log.String())
	}
}
