// Package safesock holds the rules both ends of searchd's Unix socket
// apply, so that the daemon listens only where no other user can reach
// or replace its socket, and a client talks only to a daemon of its own
// user: the socket's directory must be a real directory owned by us and
// closed to group and others, no directory above it may let another user
// swap it, and the peer at the other end of a connection must run as us.
package safesock

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// UnsafeError says why a socket, its directory or its peer is not to be
// trusted.
type UnsafeError struct{ msg string }

func (e *UnsafeError) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return &UnsafeError{fmt.Sprintf(format, args...)}
}

// Rules are the checks for one user: UID owns the directory and is the
// only peer allowed. Tests set another UID to play a second user.
type Rules struct{ UID int }

// Ours returns the rules for the effective user of this process.
func Ours() Rules { return Rules{UID: os.Geteuid()} }

// CheckDir reports why dir is unsafe to hold the socket, or nil. A
// missing directory is reported as the fs.ErrNotExist it is.
func (r Rules) CheckDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return refuse("socket directory %s is a symlink; refusing to use it", dir)
	}
	if !fi.IsDir() {
		return refuse("socket directory %s is not a directory", dir)
	}
	if uid, ok := owner(fi); ok && uid != r.UID {
		return refuse("socket directory %s is owned by uid %d, not by us (uid %d)", dir, uid, r.UID)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return refuse("socket directory %s has mode %#o; it must not be group or world accessible (chmod 700 %s)", dir, perm, dir)
	}
	return r.checkParents(dir)
}

// checkParents refuses dir when a directory above it lets another user
// rename it away and put their own in its place: one owned by someone
// other than root or us, or writable by group or others without the
// sticky bit (in /tmp, 1777, others cannot rename what is ours).
// Symlinks are resolved first: the real directories are what count.
func (r Rules) checkParents(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	for p := parent; ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("socket directory: %w", err)
		}
		if uid, ok := owner(fi); ok && uid != 0 && uid != r.UID {
			return refuse("%s, above socket directory %s, is owned by uid %d, who could replace it", p, dir, uid)
		}
		if perm := fi.Mode().Perm(); perm&0o022 != 0 && fi.Mode()&os.ModeSticky == 0 {
			return refuse("%s, above socket directory %s, has mode %#o: others could replace it (chmod go-w %s, or choose another --socket)", p, dir, perm, p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// CheckPeer refuses a connection whose other end runs as another user.
func (r Rules) CheckPeer(c net.Conn) error {
	uid, err := PeerUID(c)
	if err != nil {
		return refuse("cannot tell who runs the process at the other end of the socket: %v", err)
	}
	if uid != r.UID {
		return refuse("the process at the other end of the socket runs as uid %d, not as us (uid %d)", uid, r.UID)
	}
	return nil
}

// Dial connects to the socket at path after checking its directory, and
// keeps the connection only if the listening process runs as us.
func (r Rules) Dial(ctx context.Context, path string) (net.Conn, error) {
	if err := r.CheckDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	if err := r.CheckPeer(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// PeerUID returns the UID of the process at the other end of a Unix
// socket connection (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS).
func PeerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, fmt.Errorf("not a unix socket connection: %T", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid := -1
	var serr error
	if err := raw.Control(func(fd uintptr) { uid, serr = peerUID(int(fd)) }); err != nil {
		return -1, err
	}
	return uid, serr
}
