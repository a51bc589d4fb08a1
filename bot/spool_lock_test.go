package bot

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/bot/spool"
)

// A New that fails (a refused token, Discord away: connect tries again)
// lets go of the spool's lock, or the retry would find it held.
func TestFailedNewReleasesTheSpool(t *testing.T) {
	d := discordtest.New(t, fakeGuild(), discord.User{ID: botUser, Username: "dsearch", Bot: true}, appID)
	dir := filepath.Join(t.TempDir(), "spool")
	for range 2 {
		if _, err := New(context.Background(), Config{Token: "wrong", Socket: "/nonexistent", SpoolDir: dir, Transport: d.Transport()}); err != ErrBadToken {
			t.Fatalf("New: %v, want ErrBadToken", err)
		}
	}
	sp, err := spool.Open(dir, 1<<20, nil)
	if err != nil {
		t.Fatalf("the spool is still locked after a failed New: %v", err)
	}
	sp.Close()
}
