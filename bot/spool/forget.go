package spool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"dsearch/shared/api"
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
// Calls take turns on rejected/'s flock, so that two (the bot and a
// dsearch-bot --reconcile beside it) do not rewrite one file from the
// same old copy, the one bringing back what the other took out.
func Forget(dir string, gone func(m api.MessageUpsert, parent api.ID) bool) (int, error) {
	rej := filepath.Join(dir, "rejected")
	lock, err := lockRejected(dir)
	if lock == nil || err != nil {
		return 0, err
	}
	defer lock.Close()
	paths, err := Rejected(dir)
	if err != nil {
		return 0, err
	}
	removed, changed := 0, false
	parents, threads := map[api.ID]api.ID{}, idNames{}
	for again := true; again; {
		again = false
		for _, p := range paths {
			n, ch, _, err := forgetIn(p, gone, parents, false, nil)
			removed, changed = removed+n, changed || ch
			if err != nil {
				return removed, fmt.Errorf("spool: %s: %w", filepath.Base(p), err)
			}
			again = goneThreads(parents, threads, gone) || again
		}
	}
	if changed {
		if err := syncDir(rej); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// forgetIn is Forget on one batch: the messages taken out, whether the
// file changed, and its size now. parent holds the threads placed by the
// batches before it (oldest first), and gets this one's: a thread's
// messages go with its channel, and the batches may place a thread
// searchd never stored. A batch left with nothing is removed, or with
// keepEmpty written empty. With names, a batch naming none of them is not
// decoded (nor its threads learnt).
func forgetIn(path string, gone func(api.MessageUpsert, api.ID) bool, parent map[api.ID]api.ID, keepEmpty bool, names idNames) (int, bool, int64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, 0, nil // replayed meanwhile (--replay-rejected)
	}
	if err != nil {
		return 0, false, 0, err
	}
	if names != nil && !namesAny(data, names) {
		return 0, false, int64(len(data)), nil
	}
	var b api.MessageBatch
	if err := json.Unmarshal(data, &b); err != nil {
		return 0, false, int64(len(data)), nil // unreadable: searchd refuses it whole; a person looks at it
	}
	for _, c := range b.Channels {
		if isThread(c.Kind) {
			parent[c.ID] = c.ParentID
		}
	}
	kept := b.Messages[:0]
	for _, m := range b.Messages {
		if !gone(m, parent[m.ChannelID]) {
			kept = append(kept, m)
		}
	}
	removed := len(b.Messages) - len(kept)
	places := len(b.Guilds) + len(b.Channels)
	b.Guilds = slices.DeleteFunc(b.Guilds, func(g api.Guild) bool { return gone(api.MessageUpsert{GuildID: g.ID}, 0) })
	b.Channels = slices.DeleteFunc(b.Channels, func(c api.Channel) bool {
		return gone(api.MessageUpsert{GuildID: c.GuildID, ChannelID: c.ID}, parent[c.ID])
	})
	if removed == 0 && places == len(b.Guilds)+len(b.Channels) {
		return 0, false, int64(len(data)), nil
	}
	b.Messages = kept
	if b.Items() == 0 && !keepEmpty {
		return removed, true, 0, os.Remove(path)
	}
	if data, err = json.Marshal(&b); err != nil {
		return 0, false, 0, err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+forgetSuffix)
	if err := api.ReplaceFile(tmp, path, data); err != nil {
		return 0, false, 0, err
	}
	return removed, true, int64(len(data)), nil
}

// forgetSuffix ends the name of forgetIn's temporary copy of a batch.
const forgetSuffix = ".forget"

// removeForgetCopies removes the copies forgetIn left in dir when the
// process died before their rename: the batch is still there as it was,
// and nothing else would ever take the copy's text out.
func removeForgetCopies(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if base, ok := strings.CutSuffix(name, forgetSuffix); ok && strings.HasPrefix(base, ".") && api.IsSpoolBatch(base[1:]) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// idNames are IDs as JSON writes them, without their quotes.
type idNames map[string]struct{}

// namesAny reports whether a batch's JSON holds one of names as a quoted
// string, in one pass over it: each run of digits between quotes is
// looked up (an ID inside a message's text may match too; the batch is
// then decoded for nothing). One bytes.Contains per name made a bulk
// deletion over a full spool cost IDs × its size.
func namesAny(data []byte, names idNames) bool {
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		if j == len(data) || data[j] != '"' {
			i = j - 1 // not an ID: go on from where the digits stopped
			continue
		}
		if _, ok := names[string(data[i+1:j])]; ok && j > i+1 {
			return true
		}
		i = j // past its closing quote
	}
	return false
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
	quoted := make(idNames, len(names))
	for _, id := range names {
		quoted[id.String()] = struct{}{}
	}
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
			n, ch, size, err := forgetIn(s.path(bf.seq), gone, parents, true, quoted)
			removed, changed = removed+n, changed || ch
			if err != nil {
				return removed, fmt.Errorf("spool: batch %d: %w", bf.seq, err)
			}
			if ch {
				s.size += size - bf.size
				bf.size = size
			}
			again = goneThreads(parents, quoted, gone) || again
		}
	}
	if changed {
		if err := syncDir(s.dir); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// goneThreads adds to names each thread parent places that gone drops
// (its channel's or server's removal) and names lacks: the batches
// holding only its messages name the thread alone. It reports whether it
// added one, for the caller to read again the batches it passed over.
func goneThreads(parent map[api.ID]api.ID, names idNames, gone func(api.MessageUpsert, api.ID) bool) bool {
	added := false
	for th, p := range parent {
		if _, ok := names[th.String()]; ok || !gone(api.MessageUpsert{ChannelID: th}, p) {
			continue
		}
		names[th.String()] = struct{}{}
		added = true
	}
	return added
}

// isThread reports whether a channel kind (bot.channelKind) names a thread.
func isThread(kind string) bool { return strings.HasSuffix(kind, "Thread") }

// lockRejected takes dir's rejected/ flock, which Forget, ReplayRejected
// and searchd forget take turns on; closing the file releases it. A
// spool without rejected/ has nothing to lock (nil).
func lockRejected(dir string) (*os.File, error) {
	lock, err := os.Open(filepath.Join(dir, "rejected"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return nil, fmt.Errorf("spool: rejected/ lock: %w", err)
	}
	return lock, nil
}
