package server_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"dsearch/searchd/segment"
	"dsearch/searchd/server"
	"dsearch/searchd/socket"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
	"dsearch/shared/client"
)

// A batch being applied when searchd is told to stop (SIGTERM) finishes
// within the grace period: the bot's batch is stored, not answered
// "request canceled".
func TestShutdownLetsRequestsFinish(t *testing.T) {
	dir, err := os.MkdirTemp("", "ds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	db, err := sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	path := filepath.Join(dir, "run", "searchd.sock")
	ln, err := socket.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &server.Server{DB: db, Rules: segment.DefaultRules, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, 10*time.Second) }()

	// Another process holds the write lock, so the batch waits in flight.
	other, err := sql.Open("sqlite", "file:"+filepath.Join(data, sqlite.FileName)+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	posted := make(chan error, 1)
	go func() {
		_, err := client.New(path).PostMessages(context.Background(), &api.MessageBatch{Messages: []api.MessageUpsert{{
			ID: 1, ChannelID: 2, Author: api.Author{ID: 3, Username: "a"}, CreatedAt: time.Now(), Content: "hello"}}})
		posted <- err
	}()
	time.Sleep(200 * time.Millisecond) // the request is waiting for the lock
	stop()                             // SIGTERM
	time.Sleep(600 * time.Millisecond)
	lock.Rollback()
	select {
	case err := <-posted:
		if err != nil {
			t.Fatalf("a request in flight at shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not finish")
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := db.Message(context.Background(), 1); err != nil {
		t.Errorf("the batch was not stored: %v", err)
	}
}
