// Package spoolforget takes removed messages out of the batches the bot
// keeps on disk: those searchd refused (SPOOL/rejected/) and those
// waiting for it. One implementation for every process that forgets
// (the bot, dsearch-bot --reconcile, searchd serve's opt-outs, searchd
// forget): two would drift, and a forget path missing one rule leaves
// text on disk that a replay may store again.
package spoolforget

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

// Gone reports whether m, in a batch that places m's channel as a thread
// of parent (0: not placed as a thread there), was removed. A place the
// batch carries (a server's or channel's name) is asked about as a
// message with no ID: the place goes when gone reports it.
type Gone func(m api.MessageUpsert, parent api.ID) bool

// Rejected takes out of the batches kept in spool's rejected/ the
// messages gone reports. Each changed batch is rewritten (synced,
// renamed); one left with nothing is removed. It returns the messages
// taken out. A spool without rejected/ has nothing to clean.
//
// Calls take turns on rejected/'s flock (LockRejected), as does the
// bot's replay of each batch, so that two (the bot and a searchd forget
// beside it) do not rewrite one file from the same old copy, the one
// bringing back what the other took out.
func Rejected(spool string, gone Gone) (int, error) {
	lock, err := LockRejected(spool)
	if lock == nil || err != nil {
		return 0, err
	}
	defer lock.Close()
	return rejected(spool, lock, gone)
}

// TryRejected is Rejected if rejected/'s lock is free now, and nothing
// (false) if another holds it: searchd cleaning inside a request must not
// wait on the bot's replay, which holds the lock while it waits for
// searchd's response to the batch it posts.
func TryRejected(spool string, gone Gone) (int, bool, error) {
	lock, err := lockRejected(spool, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return 0, false, nil
	}
	if lock == nil || err != nil {
		return 0, true, err
	}
	defer lock.Close()
	n, err := rejected(spool, lock, gone)
	return n, true, err
}

func rejected(spool string, lock *os.File, gone Gone) (int, error) {
	paths, err := api.SpoolBatches(filepath.Join(spool, "rejected"))
	if err != nil {
		return 0, err
	}
	removed, changed := 0, false
	parents, threads := map[api.ID]api.ID{}, Names{}
	for again := true; again; {
		again = false
		for _, p := range paths {
			n, ch, _, err := Batch(p, gone, parents, false, nil)
			removed, changed = removed+n, changed || ch
			if err != nil {
				return removed, fmt.Errorf("spool: %s: %w", filepath.Base(p), err)
			}
			again = GoneThreads(parents, threads, gone) || again
		}
	}
	if changed {
		if err := lock.Sync(); err != nil { // the directory: the renames and removals
			return removed, err
		}
	}
	return removed, nil
}

// Batch takes out of the batch at path what gone reports: the messages
// taken out, whether the file changed, and its size now. parent holds the
// threads placed by the batches before it (oldest first), and gets this
// one's: a thread's messages go with its channel, and the batches may
// place a thread searchd never stored. A batch left with nothing is
// removed, or with keepEmpty written empty. With names, a batch naming
// none of them is not decoded (nor its threads learnt). A batch missing
// (replayed meanwhile) or unreadable (searchd refuses it whole; a person
// looks at it) is left as it is.
func Batch(path string, gone Gone, parent map[api.ID]api.ID, keepEmpty bool, names Names) (int, bool, int64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, 0, nil
	}
	if err != nil {
		return 0, false, 0, err
	}
	if names != nil && !names.any(data) {
		return 0, false, int64(len(data)), nil
	}
	var b api.MessageBatch
	if err := json.Unmarshal(data, &b); err != nil {
		return 0, false, int64(len(data)), nil
	}
	for _, c := range b.Channels {
		if IsThread(c.Kind) {
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
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+CopySuffix)
	if err := api.ReplaceFile(tmp, path, data); err != nil {
		return 0, false, 0, err
	}
	return removed, true, int64(len(data)), nil
}

// CopySuffix ends the name of Batch's temporary copy of a batch
// (".NAME.forget"): one a crash leaves holds text nothing else cleans,
// and the bot removes it when it opens its spool.
const CopySuffix = ".forget"

// Names are IDs as JSON writes them, without their quotes.
type Names map[string]struct{}

// NamesOf is ids as Names.
func NamesOf(ids []api.ID) Names {
	n := make(Names, len(ids))
	for _, id := range ids {
		n[id.String()] = struct{}{}
	}
	return n
}

// any reports whether a batch's JSON holds one of n as a quoted string,
// in one pass over it: each run of digits between quotes is looked up
// (an ID inside a message's text may match too; the batch is then
// decoded for nothing). One bytes.Contains per name made a bulk deletion
// over a full spool cost IDs × its size.
func (n Names) any(data []byte) bool {
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
		if _, ok := n[string(data[i+1:j])]; ok && j > i+1 {
			return true
		}
		i = j // past its closing quote
	}
	return false
}

// GoneThreads adds to names each thread parent places that gone drops
// (its channel's or server's removal) and names lacks: the batches
// holding only its messages name the thread alone. It reports whether it
// added one, for the caller to read again the batches it passed over.
func GoneThreads(parent map[api.ID]api.ID, names Names, gone Gone) bool {
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

// IsThread reports whether a channel kind (the bot's channelKind) names a
// thread.
func IsThread(kind string) bool { return strings.HasSuffix(kind, "Thread") }

// LockRejected takes spool's rejected/ flock, which Rejected, the bot's
// replay and searchd forget take turns on; closing the file releases it.
// A spool without rejected/ has nothing to lock (nil).
func LockRejected(spool string) (*os.File, error) {
	return lockRejected(spool, syscall.LOCK_EX)
}

func lockRejected(spool string, how int) (*os.File, error) {
	lock, err := os.Open(filepath.Join(spool, "rejected"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), how); err != nil {
		lock.Close()
		return nil, fmt.Errorf("spool: rejected/ lock: %w", err)
	}
	return lock, nil
}
