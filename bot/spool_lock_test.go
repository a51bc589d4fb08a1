package bot

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
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

// A second bot on the same spool stops at once, naming the first; it
// does not number batches alike and overwrite the first one's.
func TestSecondBotOnOneSpoolIsRefused(t *testing.T) {
	d := discordtest.New(t, fakeGuild(), discord.User{ID: botUser, Username: "dsearch", Bot: true}, appID)
	dir := filepath.Join(t.TempDir(), "spool")
	cfg := Config{Token: discordtest.Token, Socket: "/nonexistent", SpoolDir: dir, Transport: d.Transport()}
	first, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer first.spool.Close()
	if _, err := New(context.Background(), cfg); !errors.Is(err, spool.ErrLocked) || !strings.Contains(err.Error(), "pid ") {
		t.Errorf("a second bot on the spool: %v, want spool.ErrLocked naming the first's pid", err)
	}
}
