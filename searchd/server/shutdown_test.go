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
// locked serves a database whose write lock another process holds, so
// that a posted batch waits in flight; unlock releases it.
func locked(t *testing.T, grace time.Duration) (db *sqlite.DB, stop func(), served <-chan error, posted <-chan error, unlock func()) {
	t.Helper()
	dir, err := os.MkdirTemp("", "ds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	db, err = sqlite.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	path := filepath.Join(dir, "run", "searchd.sock")
	ln, err := socket.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &server.Server{DB: db, Rules: segment.DefaultRules, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	servedc := make(chan error, 1)
	go func() { servedc <- srv.Serve(ctx, ln, grace) }()
	other, err := sql.Open("sqlite", "file:"+filepath.Join(data, sqlite.FileName)+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	lock, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	postedc := make(chan error, 1)
	go func() {
		_, err := client.New(path).PostMessages(context.Background(), &api.MessageBatch{Messages: []api.MessageUpsert{{
			ID: 1, ChannelID: 2, Author: api.Author{ID: 3, Username: "a"}, CreatedAt: time.Now(), Content: "hello"}}})
		postedc <- err
	}()
	time.Sleep(200 * time.Millisecond) // the request is waiting for the lock
	return db, cancel, servedc, postedc, func() { lock.Rollback() }
}

// A batch being applied when searchd is told to stop (SIGTERM) finishes
// within the grace period: the bot's batch is stored, not answered
// "request canceled".
func TestShutdownLetsRequestsFinish(t *testing.T) {
	db, stop, served, posted, unlock := locked(t, 10*time.Second)
	stop() // SIGTERM
	time.Sleep(600 * time.Millisecond)
	unlock()
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

// A request still running when the grace period ends is canceled, and
// the server stops: shutdown is bounded.
func TestShutdownGraceEnds(t *testing.T) {
	_, stop, served, posted, unlock := locked(t, 300*time.Millisecond)
	defer unlock()
	start := time.Now()
	stop()
	select {
	case err := <-served:
		if err == nil || time.Since(start) > 5*time.Second {
			t.Errorf("Serve returned %v after %s", err, time.Since(start))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not stop after its grace period")
	}
	select {
	case err := <-posted:
		if err == nil {
			t.Error("a request canceled at the end of the grace period succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Error("the request outlived the grace period")
	}
}
