package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"dsearch/shared/api"
)

// A server the bot was removed from while it was down sent no
// GUILD_DELETE the bot could see: at its next start READY no longer lists
// it, Discord refuses it (403), and it is forgotten (issue 23.3). A server
// the bot never synced (imported from an export) stays.
func TestGuildLeftWhileAwayIsForgotten(t *testing.T) {
	e := removedWhileAway(t)
	ctx := context.Background()
	e.start()
	waitFor(t, "the server the bot left forgotten", func() bool {
		st, err := e.c.Stats(ctx)
		return err == nil && st.Messages == 1
	})
	if _, err := e.c.Message(ctx, 7000, 0, 0); err != nil {
		t.Errorf("the imported server was forgotten too: %v", err)
	}
	time.Sleep(100 * time.Millisecond) // nothing more is forgotten
	if st, _ := e.c.Stats(ctx); st.Messages != 1 {
		t.Errorf("%d messages after the start, want the imported one", st.Messages)
	}
}

// dsearch-bot --reconcile, run while the bot is stopped, forgets the
// server the bot was removed from meanwhile, as a start does, and keeps
// an imported server it never joined.
func TestReconcileForgetsGuildLeftWhileAway(t *testing.T) {
	e := removedWhileAway(t)
	ctx := context.Background()
	var out strings.Builder
	if err := Reconcile(ctx, e.cfg, &out); err != nil {
		t.Fatalf("reconcile: %v\n%s", err, &out)
	}
	if st, err := e.c.Stats(ctx); err != nil || st.Messages != 1 {
		t.Errorf("after the reconciliation: %+v, %v; want only the imported message\n%s", st, err, &out)
	}
	if _, err := e.c.Message(ctx, 7000, 0, 0); err != nil {
		t.Errorf("the imported server was forgotten too: %v", err)
	}
	if !strings.Contains(out.String(), "servers the bot was removed from, forgotten: 1") {
		t.Errorf("the reconciliation does not say it forgot the server:\n%s", &out)
	}
}

// removedWhileAway syncs the test server, imports a server the bot never
// joined (5000, message 7000), stops the bot and removes it from the
// test server while no bot is connected to see its GUILD_DELETE.
func removedWhileAway(t *testing.T) *env {
	t.Helper()
	e := setup(t)
	e.backfilled(int64(len(history())))
	imported := &api.MessageBatch{
		Guilds:   []api.Guild{{ID: 5000, Name: "archive"}},
		Channels: []api.Channel{{ID: 6000, GuildID: 5000, Name: "old", Kind: "GuildTextChat"}},
		Messages: []api.MessageUpsert{{ID: 7000, GuildID: 5000, ChannelID: 6000, Author: api.Author{ID: 9, Username: "x"},
			CreatedAt: t0, Content: "an imported message"}},
	}
	if _, err := e.c.PostMessages(context.Background(), imported); err != nil {
		t.Fatal(err)
	}
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.discord.RemoveBot()
	return e
}
