package safesock

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// base returns a fresh directory of ours under the system's temporary
// directory (sticky, so it passes the parent rules), with a short path.
func base(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "ss")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestCheckDir(t *testing.T) {
	b := base(t)
	mk := func(path string, mode os.FileMode) string {
		if err := os.MkdirAll(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	private := mk(filepath.Join(b, "private"), 0o700)
	open := mk(filepath.Join(b, "open"), 0o750)
	link := filepath.Join(b, "link")
	os.Symlink(private, link)
	// A private directory under one anyone may write to: another user
	// could rename it away and put a directory of theirs in its place.
	underOpen := mk(filepath.Join(mk(filepath.Join(b, "shared"), 0o777), "run"), 0o700)
	underGroup := mk(filepath.Join(mk(filepath.Join(b, "group"), 0o770), "run"), 0o700)
	// The sticky bit (as on /tmp) stops them.
	underSticky := mk(filepath.Join(mk(filepath.Join(b, "sticky"), 0o777|os.ModeSticky), "run"), 0o700)
	// Through a symlink the real parent counts.
	os.Symlink(filepath.Join(b, "shared"), filepath.Join(b, "tolink"))
	throughLink := filepath.Join(b, "tolink", "run")

	ours := Ours()
	other := Rules{UID: ours.UID + 4242} // the same files, seen by another user
	tests := []struct {
		name  string
		rules Rules
		dir   string
		want  string // "" for accepted
	}{
		{"private", ours, private, ""},
		{"under sticky", ours, underSticky, ""},
		{"group and world", ours, open, "must not be group or world accessible"},
		{"symlink", ours, link, "is a symlink"},
		{"under 0777", ours, underOpen, "others could replace it"},
		{"under 0770", ours, underGroup, "others could replace it"},
		{"under 0777 through a symlink", ours, throughLink, "others could replace it"},
		{"another user's", other, private, "owned by uid"},
		{"missing", ours, filepath.Join(b, "missing"), "no such file"},
	}
	for _, tt := range tests {
		err := tt.rules.CheckDir(tt.dir)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	// A parent owned by another user (not root) could replace it too.
	// As root, hand a parent to nobody; otherwise our own parents are
	// "another user's" for the rules of a third.
	parentRules, theirs := other, filepath.Join(private, "run")
	if os.Geteuid() == 0 {
		nobody := mk(filepath.Join(b, "nobody"), 0o755)
		if err := os.Chown(nobody, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		parentRules, theirs = ours, mk(filepath.Join(nobody, "run"), 0o700)
	}
	if err := parentRules.checkParents(theirs); err == nil || !strings.Contains(err.Error(), "who could replace it") {
		t.Errorf("parent of another user: %v", err)
	}
}

func TestDialChecksPeer(t *testing.T) {
	dir := filepath.Join(base(t), "run")
	os.Mkdir(dir, 0o700)
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx := context.Background()
	c, err := Ours().Dial(ctx, path)
	if err != nil {
		t.Fatalf("our own daemon: %v", err)
	}
	c.Close()
	// The peer check on its own: a daemon whose UID is not the one
	// expected is refused after connecting.
	raw, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	err = Rules{UID: os.Geteuid() + 4242}.CheckPeer(raw)
	if _, ok := err.(*UnsafeError); !ok || !strings.Contains(err.Error(), "runs as uid") {
		t.Errorf("peer of another uid: %v", err)
	}
}
