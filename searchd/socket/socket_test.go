package socket

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shortDir returns a private directory with a short path: socket paths
// must fit in sun_path.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "ds")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestDirRefusals(t *testing.T) {
	base := shortDir(t)
	private := filepath.Join(base, "private")
	if err := PrepareDir(private); err != nil {
		t.Fatalf("fresh directory: %v", err)
	}
	if fi, _ := os.Stat(private); fi.Mode().Perm() != 0o700 {
		t.Errorf("created with mode %v", fi.Mode().Perm())
	}

	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o750)
	link := filepath.Join(base, "link")
	os.Symlink(private, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)

	// A private directory under one anyone may write to: another user
	// could rename it away and put theirs in its place.
	shared := filepath.Join(base, "shared")
	os.Mkdir(shared, 0o700)
	os.Chmod(shared, 0o777)
	underShared := filepath.Join(shared, "run")
	os.Mkdir(underShared, 0o700)

	tests := []struct{ dir, want string }{
		{open, "must not be group or world accessible"},
		{underShared, "others could replace it"},
		{link, "is a symlink"},
		{file, "not a directory"},
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o700)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		tests = append(tests, struct{ dir, want string }{other, "owned by uid 65534"})
	}
	for _, tt := range tests {
		err := PrepareDir(tt.dir)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("PrepareDir(%s) = %v, want %q", filepath.Base(tt.dir), err, tt.want)
		}
		if _, err := Listen(filepath.Join(tt.dir, "s.sock")); err == nil {
			t.Errorf("Listen in %s succeeded", filepath.Base(tt.dir))
		}
	}
}

func TestListen(t *testing.T) {
	dir := filepath.Join(shortDir(t), "run")
	path := filepath.Join(dir, "s.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket file: %v, %v", fi.Mode(), err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if _, err := Listen(path); !errors.Is(err, ErrInUse) {
		t.Errorf("second Listen: %v, want ErrInUse", err)
	}
	ln.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("closing the listener left the socket: %v", err)
	}

	// A stale socket (its daemon died) is replaced.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	ln, err = Listen(path)
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	ln.Close()

	// Anything else at the path is refused and left alone.
	os.WriteFile(path, []byte("data"), 0o600)
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("over a regular file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "data" {
		t.Error("the regular file was touched")
	}

	long := filepath.Join(dir, strings.Repeat("x", 120)+".sock")
	if _, err := Listen(long); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("long path: %v", err)
	}
}

func TestPeerUID(t *testing.T) {
	path := filepath.Join(shortDir(t), "p.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := net.Dial("unix", path)
		if err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	uid, err := PeerUID(c)
	if err != nil || uid != os.Getuid() {
		t.Errorf("PeerUID = %d, %v; want %d", uid, err, os.Getuid())
	}
}
