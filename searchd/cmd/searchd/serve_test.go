package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"dsearch/searchd/sqlite"
	"dsearch/shared/client"
)

// syncBuffer is a bytes.Buffer safe to write from the daemon's goroutines
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// daemon is searchd serve running in this process.
type daemon struct {
	logs *syncBuffer
	stop func() error
}

// startServe runs searchd serve with args until stop, after waiting for
// its health route to answer on sock.
func startServe(t *testing.T, sock string, args ...string) *daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemon{logs: &syncBuffer{}}
	done := make(chan error, 1)
	go func() {
		m := &Main{Stdout: d.logs, Stderr: d.logs}
		done <- m.Run(ctx, append([]string{"serve", "--socket", sock, "--llm=false"}, args...))
	}()
	var once sync.Once
	var err error
	d.stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { d.stop() })
	c := client.New(sock)
	for i := 0; ; i++ {
		select {
		case err := <-done:
			t.Fatalf("serve exited: %v\n%s", err, d.logs)
		default:
		}
		if _, err := c.Health(ctx); err == nil {
			return d
		} else if i == 200 {
			t.Fatalf("serve did not come up: %v\n%s", err, d.logs)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// shortTemp is a private directory with a path short enough for sockets.
func shortTemp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// One daemon per data directory: a second serve behind another socket
// is refused, and so is restore, until the first stops.
func TestServeLocksDataDir(t *testing.T) {
	dir := shortTemp(t)
	data := importSample(t, dir)
	backup := filepath.Join(dir, "backup.db")
	if out, err := run(t, "backup", "--data", data, backup); err != nil || !strings.Contains(out, "searchd restore "+backup) {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	d := startServe(t, filepath.Join(dir, "a", "s.sock"), "--data", data)
	// Bounded: were it not refused, this serve would run on.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var second bytes.Buffer
	err := (&Main{Stdout: &second, Stderr: &second}).Run(ctx, []string{"serve", "--data", data,
		"--socket", filepath.Join(dir, "b", "s.sock"), "--llm=false"})
	if !errors.Is(err, sqlite.ErrLocked) {
		t.Errorf("second serve on the data directory: %v\n%s", err, &second)
	}
	if _, err := os.Stat(filepath.Join(dir, "b", "s.sock")); err == nil {
		t.Error("the second serve listened")
	}
	if out, err := run(t, "restore", "--data", data, backup); !errors.Is(err, sqlite.ErrLocked) {
		t.Errorf("restore under serve: %v\n%s", err, out)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "restore", "--data", data, backup)
	if err != nil || !strings.Contains(out, "integrity ok") || !strings.Contains(out, "previous database is kept as") {
		t.Fatalf("restore after serve stopped: %v\n%s", err, out)
	}
	out, err = run(t, "stats", "--data", data)
	if err != nil || !strings.Contains(out, "messages 42") {
		t.Errorf("stats after restore: %v\n%s", err, out)
	}
}

// A damaged database makes the keyword index fail to load; the error
// that says so must not carry the message text SQLite's driver quotes.
func TestCorruptDatabaseLogsNoText(t *testing.T) {
	dir := shortTemp(t)
	data := importSample(t, dir)
	const secret = "SECRETWORDS of a private message"
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(data, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	// Damage: created_at holding text (the table's STRICT declaration
	// edited away first). The keyword index's scan into an integer
	// fails, and database/sql quotes the value in its error.
	raw.SetMaxOpenConns(1)
	for _, q := range []string{
		`PRAGMA writable_schema = ON`,
		`UPDATE sqlite_schema SET sql = replace(sql, ') STRICT', ')') WHERE name = 'messages'`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	raw, _ = sql.Open("sqlite", "file:"+filepath.Join(data, sqlite.FileName))
	if _, err := raw.Exec(`UPDATE messages SET created_at = ? WHERE id = (SELECT MIN(id) FROM messages)`, secret); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	d := startServe(t, filepath.Join(dir, "run", "s.sock"), "--data", data)
	for i := 0; i < 200 && !strings.Contains(d.logs.String(), "keyword index"); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	d.stop()
	logs := d.logs.String()
	if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "Scan error") {
		t.Fatalf("no error about the damaged row was logged; the test cannot tell:\n%s", logs)
	}
	if strings.Contains(logs, "SECRETWORDS") {
		t.Errorf("the log carries message text:\n%s", logs)
	}
}

// status --wait waits for readiness (the health route), however long
// start-up takes, instead of a fixed time.
func TestStatusWaitsForReadiness(t *testing.T) {
	dir := shortTemp(t)
	data := importSample(t, dir)
	sock := filepath.Join(dir, "run", "s.sock")
	if _, err := run(t, "status", "--socket", sock); err == nil {
		t.Fatal("status answered with no daemon")
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		var out bytes.Buffer
		err := (&Main{Stdout: &out, Stderr: &out}).Run(context.Background(), []string{"status", "--socket", sock, "--wait", "30s"})
		done <- result{out.String(), err}
	}()
	time.Sleep(time.Second) // a slow start: nothing listens yet
	select {
	case r := <-done:
		t.Fatalf("status --wait gave up before the daemon started: %v\n%s", r.err, r.out)
	default:
	}
	startServe(t, sock, "--data", data)
	r := <-done
	if r.err != nil || !strings.Contains(r.out, "42 messages") || !strings.Contains(r.out, " on "+sock) {
		t.Errorf("status --wait: %v\n%s", r.err, r.out)
	}
}

// The socket a configuration uses, for curl: DATA/run without
// XDG_RUNTIME_DIR (macOS, many Linux machines), there with it.
func TestStatusPrintSocket(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	t.Setenv("XDG_RUNTIME_DIR", "")
	if out, err := run(t, "status", "--data", data, "--print-socket"); err != nil || out != filepath.Join(data, "run", "searchd.sock")+"\n" {
		t.Errorf("without XDG_RUNTIME_DIR: %q, %v", out, err)
	}
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	if out, err := run(t, "status", "--data", data, "--print-socket"); err != nil || out != "/run/user/1000/dsearch/searchd.sock\n" {
		t.Errorf("with XDG_RUNTIME_DIR: %q, %v", out, err)
	}
}

// searchd status refuses a daemon it cannot trust, at once, even when
// told to wait: here one behind a socket in a directory others may enter.
func TestStatusRefusesUntrustedSocket(t *testing.T) {
	dir := shortTemp(t)
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o755)
	sock := filepath.Join(open, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start := time.Now()
	_, err = run(t, "status", "--socket", sock, "--wait", "30s")
	if err == nil || !strings.Contains(err.Error(), "refusing to talk to searchd") || time.Since(start) > 10*time.Second {
		t.Errorf("status on an untrusted socket: %v after %v", err, time.Since(start))
	}
}
