package sqlite

import (
	"testing"

	"golang.org/x/sys/unix"
)

// limitFileSize makes writes past n bytes into any file fail (EFBIG;
// Go ignores SIGXFSZ), as a full disk would, until the returned function
// restores the limit. It applies to the whole process: callers must not
// run in parallel.
func limitFileSize(t *testing.T, n uint64) func() {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Skip(err)
	}
	lim := old
	lim.Cur = n
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Skip(err)
	}
	return func() {
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
			t.Fatal(err)
		}
	}
}
