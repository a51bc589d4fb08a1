package bot

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Audit 13 (trust): while searchd is down the spool holds what members
// wrote; a message deleted meanwhile keeps its text in the spooled batch
// on disk until searchd is back and takes the deletion, however long
// that is (the rejected/ batches are scrubbed of removals, the waiting
// ones are not). The deletion is spooled beside it, so the text is of
// no use there.
func TestDeletedMessageTextLeavesTheWaitingSpool(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	e.sd.stop()
	m := message(general, user(bob, "bob"), t0.Add(200*24*time.Hour), "my passport number is zq-7731-secret")
	e.discord.Dispatch("MESSAGE_CREATE", m)
	waitFor(t, "the message spooled", func() bool { return e.bot.spool.Len() > 0 })
	e.discord.Dispatch("MESSAGE_DELETE", map[string]any{"id": m.ID, "channel_id": general, "guild_id": guildID})
	waitFor(t, "the deletion spooled", func() bool { return e.bot.spool.Len() > 1 })
	time.Sleep(500 * time.Millisecond)
	var holding []string
	filepath.WalkDir(e.cfg.SpoolDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte("zq-7731-secret")) {
				holding = append(holding, filepath.Base(path))
			}
		}
		return nil
	})
	if len(holding) > 0 {
		t.Errorf("a deleted message's text stays in the spool while searchd is down: %v", holding)
	}
}
