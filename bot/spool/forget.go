package spool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dsearch/shared/api"
	"dsearch/shared/spoolforget"
)

// Forget takes out of the batches kept in dir's rejected/ the messages
// gone reports: deleted on Discord, of a channel, thread or server
// forgotten, of a member who opted out. searchd would drop them at a
// replay anyway, but the files would keep their text on disk until then.
// gone is given each message and, when the batch places the message's
// channel as a thread, the thread's channel (0 otherwise). Each changed
// batch is rewritten (synced, renamed); one left with nothing is
// removed. It returns the messages taken out.
//
// The places a batch carries (a channel's or server's name) go too when
// gone reports a message of theirs with no ID: a forgotten channel's or
// server's.
//
// It is spoolforget.Rejected, which searchd uses too (its opt-outs,
// searchd forget): calls take turns on rejected/'s flock, so that two do
// not rewrite one file from the same old copy.
func Forget(dir string, gone func(m api.MessageUpsert, parent api.ID) bool) (int, error) {
	return spoolforget.Rejected(dir, gone)
}

// removeForgetCopies removes the copies spoolforget.Batch left in dir
// when the process died before their rename: the batch is still there as
// it was, and nothing else would ever take the copy's text out.
func removeForgetCopies(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if base, ok := strings.CutSuffix(name, spoolforget.CopySuffix); ok && strings.HasPrefix(base, ".") && api.IsSpoolBatch(base[1:]) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ForgetWaiting takes out of the batches waiting before batch seq (PutSeq)
// the messages gone reports, as Forget does in rejected/: seq removes
// them (a deletion, a forgotten channel or server, a full edit), so the
// copies ahead of it are of no use to searchd, and their text must not
// wait on disk for as long as searchd is away. A batch left with nothing
// stays, empty, for Run to drop: it may be on its way to searchd. It
// returns the messages taken out.
//
// names are the IDs gone matches by (messages, channels and threads,
// servers, authors): a batch that names none of them is not decoded, as a
// removal while searchd is away would otherwise decode the whole spool.
// A thread only a waiting batch places (archived, and the bot restarted:
// the gateway state lacks it) is named once that batch is read, which
// names its channel; the batches read before are read again then, as a
// thread's messages may wait ahead of the batch placing it (a
// THREAD_UPDATE). The caller names the threads it knows.
func (s *Spool) ForgetWaiting(seq uint64, names []api.ID, gone func(m api.MessageUpsert, parent api.ID) bool) (int, error) {
	quoted := spoolforget.NamesOf(names)
	s.mu.Lock() // Run removes a delivered batch under it
	defer s.mu.Unlock()
	removed, changed := 0, false
	parents := map[api.ID]api.ID{}
	for again := true; again; {
		again = false
		for i := range s.queue {
			bf := &s.queue[i]
			if bf.seq >= seq {
				break
			}
			n, ch, size, err := spoolforget.Batch(s.path(bf.seq), gone, parents, true, quoted)
			removed, changed = removed+n, changed || ch
			if err != nil {
				return removed, fmt.Errorf("spool: batch %d: %w", bf.seq, err)
			}
			if ch {
				s.size += size - bf.size
				bf.size = size
			}
			again = spoolforget.GoneThreads(parents, quoted, gone) || again
		}
	}
	if changed {
		if err := syncDir(s.dir); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// lockRejected takes dir's rejected/ flock (spoolforget.LockRejected).
func lockRejected(dir string) (*os.File, error) { return spoolforget.LockRejected(dir) }
