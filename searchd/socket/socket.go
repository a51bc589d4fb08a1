// Package socket listens on a Unix domain socket inside a private
// directory. The 0700 directory is the real access control: it works on
// every OS, including those that ignore a socket file's own mode. The
// peer's UID is checked again on each connection (see PeerUID). The
// rules live in shared/safesock, where clients apply them too.
package socket

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"dsearch/shared/safesock"
)

// MaxPathLen is the longest socket path we accept: sun_path is 108 bytes
// on Linux and 104 on macOS, with a terminating NUL.
const MaxPathLen = 103

// PrepareDir creates dir 0700 if it is missing, then refuses it unless it
// is a real directory (not a symlink), owned by us, and closed to group
// and others.
func PrepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	return CheckDir(dir)
}

// CheckDir reports why dir is unsafe for the socket, or nil: the rules
// clients apply too (safesock).
func CheckDir(dir string) error { return safesock.Ours().CheckDir(dir) }

// ErrInUse means a live daemon already answers on the socket.
var ErrInUse = errors.New("already in use")

// Listen prepares the socket's directory and listens on path. A live
// socket at path is left alone (ErrInUse); a stale one is removed; any
// other file there is refused, never deleted.
func Listen(path string) (net.Listener, error) {
	if len(path) > MaxPathLen {
		return nil, fmt.Errorf("socket path %s is %d bytes; at most %d fit (choose a shorter --socket)", path, len(path), MaxPathLen)
	}
	if err := PrepareDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket; refusing to remove it", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("socket %s: %w by a running searchd", path, ErrInUse)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	// Close unlinks the socket file; Shutdown relies on that.
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// PeerUID returns the UID of the process at the other end of a Unix
// socket connection.
func PeerUID(c net.Conn) (int, error) { return safesock.PeerUID(c) }
