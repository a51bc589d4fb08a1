package bot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"dsearch/bot/spool"
	"dsearch/shared/api"
	"dsearch/shared/client"
)

// searchd restarted again and again (SIGTERM, as systemd and launchd stop
// it) while the spool delivers a sync: every message arrives, and nothing
// is set aside as rejected.
func TestRestartsDuringSyncLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs searchd")
	}
	dir, err := os.MkdirTemp("", "dsr") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sd := &searchd{t: t, bin: buildSearchd(t), data: filepath.Join(dir, "data"), sock: filepath.Join(dir, "run", "searchd.sock"),
		ollama: "http://127.0.0.1:1"}
	sd.start()
	t.Cleanup(sd.stop)

	const batches, perBatch = 60, api.MaxBatchItems
	sp, err := spool.Open(filepath.Join(dir, "spool"), 1<<30, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for b := range batches {
		var mb api.MessageBatch
		for i := range perBatch {
			n := b*perBatch + i
			mb.Messages = append(mb.Messages, api.MessageUpsert{ID: api.ID(1e6 + n), GuildID: 1, ChannelID: api.ID(10 + n%7),
				Author: api.Author{ID: api.ID(100 + n%5), Username: fmt.Sprint("user", n%5)}, CreatedAt: at.Add(time.Duration(n) * time.Second),
				Content: fmt.Sprintf("message %d of a long sync, with a few words to index", n)})
		}
		if err := sp.Put(&mb); err != nil {
			t.Fatal(err)
		}
	}
	c := client.New(sd.sock)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	delivered := make(chan struct{})
	go func() {
		sp.Run(ctx, func(ctx context.Context, b *api.MessageBatch) error { _, err := c.PostMessages(ctx, b); return err })
		close(delivered)
	}()
	restarts := 0
	for ; restarts < 8 && sp.Len() > 0; restarts++ {
		time.Sleep(time.Duration(150+restarts*37%120) * time.Millisecond)
		sd.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-sd.exited:
		case <-time.After(15 * time.Second):
			t.Fatal("searchd did not stop")
		}
		sd.start()
	}
	deadline := time.Now().Add(60 * time.Second)
	for sp.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-delivered
	st, err := c.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rejected, _ := spool.Rejected(filepath.Join(dir, "spool"))
	t.Logf("%d restarts; %d of %d messages stored, %d batches waiting, %d rejected", restarts, st.Messages, batches*perBatch, sp.Len(), len(rejected))
	if restarts < 6 {
		t.Errorf("only %d restarts happened during the sync; the test wants more", restarts)
	}
	if st.Messages != batches*perBatch || len(rejected) != 0 {
		t.Errorf("after %d restarts: %d of %d messages stored, %d batches rejected", restarts, st.Messages, batches*perBatch, len(rejected))
	}
}
