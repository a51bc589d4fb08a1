package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// LockName is the data directory's lock file (see LockDir).
const LockName = "lock"

// ErrLocked means another process holds the data directory's lock: a
// searchd serve, or a restore.
var ErrLocked = errors.New("data directory in use")

// prepareDir creates the data directory 0700, and refuses one that
// already exists open to group or others, or owned by another user:
// messages are private, and a directory made by hand or by an old
// version must not stay readable without anyone noticing.
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("data directory %s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("data directory %s is owned by uid %d, not by us (uid %d)", dir, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("data directory %s has mode %#o; messages are private, so it must not be group or world accessible (chmod 700 %s)", dir, perm, dir)
	}
	return nil
}

// Lock is a held data directory lock.
type Lock struct{ f *os.File }

// LockDir takes the data directory's exclusive lock (and completes a
// restore that was cut short, see Restore), an flock on
// DATA/lock that the kernel drops when the process ends, however it
// ends. searchd serve holds it for its life, so a second daemon on the
// same database (behind another socket) is refused, and restore takes it
// so as never to swap the file under a running daemon. Imports and other
// commands do not take it: SQLite lets them share the database.
func LockDir(dir string) (*Lock, error) {
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			holder := ""
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
			return nil, fmt.Errorf("%w: %s is locked by a running searchd serve or restore%s; stop it first", ErrLocked, dir, holder)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The holder's pid, for the message above; the lock is the flock.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	// A restore cut short is completed by whoever holds the lock next,
	// before anything opens the database.
	j, err := pendingRestore(dir)
	if err == nil && j != nil {
		if err = completeRestore(dir, *j); err != nil {
			err = fmt.Errorf("completing a restore that was cut short: %w", err)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f}, nil
}

// Release drops the lock.
func (l *Lock) Release() error { return l.f.Close() }
