package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dsearch/shared/api"
)

// listen is a Unix socket in a private directory of its own (short: a
// socket's path is limited to ~100 bytes), for a fake searchd.
func listen(t *testing.T) (string, net.Listener) {
	t.Helper()
	dir, err := os.MkdirTemp("", "dc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	return path, ln
}

func TestErrorsAndFixedHost(t *testing.T) {
	path, ln := listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "searchd.sock" {
			t.Errorf("host %q", r.Host)
		}
		switch r.URL.Path {
		case "/v1/healthz":
			w.Write([]byte(`{"ok":true,"version":"v","schema_version":3}`))
		case "/v1/stats":
			w.WriteHeader(http.StatusTeapot)
			w.Write([]byte("not json"))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"not found"}`))
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()

	c := New(path)
	ctx := context.Background()
	if h, err := c.Health(ctx); err != nil || h.SchemaVersion != 3 {
		t.Errorf("health: %+v, %v", h, err)
	}
	var ae *api.Error
	if _, err := c.Segment(ctx, 5); !errors.As(err, &ae) || ae.Status != 404 || ae.Message != "not found" {
		t.Errorf("404: %v", err)
	}
	if _, err := c.Stats(ctx); !errors.As(err, &ae) || ae.Status != http.StatusTeapot || ae.Message == "" {
		t.Errorf("non-JSON error: %v", err)
	}
	// The transport dials only the socket, and only for the fixed host.
	if _, err := c.http.Get("http://example.com/"); err == nil || !strings.Contains(err.Error(), "refusing to dial") {
		t.Errorf("other host: %v", err)
	}
	if _, err := New(filepath.Join(filepath.Dir(path), "none.sock")).Health(ctx); err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Errorf("dead socket: %v", err)
	}
}

func TestIDJSON(t *testing.T) {
	var id api.ID
	if err := id.UnmarshalText([]byte("-1340286991073280000")); err != nil || id != -1340286991073280000 {
		t.Errorf("negative id: %d, %v", id, err)
	}
	if err := id.UnmarshalText([]byte("12a")); err == nil {
		t.Error("12a parsed")
	}
	if got := api.JumpURL(1, 2, 3); got != "https://discord.com/channels/1/2/3" {
		t.Error(got)
	}
}

// A daemon the server's rules would not trust gets nothing: not its
// directory's owner, not a peer of another user, not a socket in a
// directory others may enter. Tests run as one user, so "another user"
// is the client expecting another UID than the socket's.
func TestRefusesUntrustedDaemon(t *testing.T) {
	path, ln := listen(t)
	var asked int
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked++
		w.Write([]byte(`{"ok":true}`))
	})}
	go srv.Serve(ln)
	defer srv.Close()
	ctx := context.Background()

	c := New(path)
	c.rules.UID += 4242 // the daemon's directory and process are not this "user's"
	if _, err := c.Health(ctx); err == nil || !strings.Contains(err.Error(), "refusing to talk to searchd at "+path) ||
		!strings.Contains(err.Error(), "owned by uid") {
		t.Errorf("another user's daemon: %v", err)
	}
	if _, err := c.PostMessages(ctx, &api.MessageBatch{}); err == nil {
		t.Error("sent a batch to another user's daemon")
	}
	os.Chmod(filepath.Dir(path), 0o755)
	if _, err := New(path).Health(ctx); err == nil || !strings.Contains(err.Error(), "must not be group or world accessible") {
		t.Errorf("open directory: %v", err)
	}
	if asked != 0 {
		t.Errorf("the untrusted daemon was asked %d times", asked)
	}
	os.Chmod(filepath.Dir(path), 0o700)
	if _, err := New(path).Health(ctx); err != nil || asked != 1 {
		t.Errorf("our own daemon: %v (asked %d)", err, asked)
	}
}

// A search that fails in transport (searchd dropped the connection in a
// restart or a crash; the caller's deadline passed) says so without the
// request's URL, whose q is what was searched: a message's text for
// "Find related conversations", and the bot logs the error.
func TestTransportErrorsHoldNoQueryText(t *testing.T) {
	path, ln := listen(t)
	hang := make(chan struct{})
	defer close(hang)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "slow secret diagnosis" {
			<-hang
			return
		}
		c, _, _ := w.(http.Hijacker).Hijack()
		c.Close() // searchd went away mid-request
	})}
	go srv.Serve(ln)
	defer srv.Close()
	_, err := New(path).Search(context.Background(), url.Values{"q": {"my secret diagnosis"}})
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "/v1/search") {
		t.Errorf("a dropped connection: %v, want an error naming the route and not the query", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = New(path).Search(ctx, url.Values{"q": {"slow secret diagnosis"}})
	if err == nil || strings.Contains(err.Error(), "secret") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("past the deadline: %v, want context.DeadlineExceeded without the query", err)
	}
}
