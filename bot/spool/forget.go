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
	lock, err := os.Open(rej)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return 0, fmt.Errorf("spool: rejected/ lock: %w", err)
	}
	paths, err := Rejected(dir)
	if err != nil {
		return 0, err
	}
	removed, changed := 0, false
	for _, p := range paths {
		n, ch, err := forgetIn(p, gone)
		removed, changed = removed+n, changed || ch
		if err != nil {
			return removed, fmt.Errorf("spool: %s: %w", filepath.Base(p), err)
		}
	}
	if changed {
		if err := syncDir(rej); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// forgetIn is Forget on one batch: the messages taken out, and whether
// the file changed.
func forgetIn(path string, gone func(api.MessageUpsert, api.ID) bool) (int, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil // replayed meanwhile (--replay-rejected)
	}
	if err != nil {
		return 0, false, err
	}
	var b api.MessageBatch
	if err := json.Unmarshal(data, &b); err != nil {
		return 0, false, nil // unreadable: searchd refuses it whole; a person looks at it
	}
	// A thread's messages go with its channel: the batch may place a
	// thread searchd never stored.
	parent := map[api.ID]api.ID{}
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
		return 0, false, nil
	}
	b.Messages = kept
	if b.Items() == 0 {
		return removed, true, os.Remove(path)
	}
	if data, err = json.Marshal(&b); err != nil {
		return 0, false, err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".forget")
	if err := replaceFile(tmp, path, data); err != nil {
		return 0, false, err
	}
	return removed, true, nil
}

// isThread reports whether a channel kind (bot.channelKind) names a thread.
func isThread(kind string) bool { return strings.HasSuffix(kind, "Thread") }

// ForgetAuthor takes a member's messages out of the batches kept in dir's
// rejected/ (the bot calls it when the member opts out).
//
// A partial update that does not name its author cannot be told apart
// and stays; searchd skips it at a replay (its message is tombstoned).
func ForgetAuthor(dir string, author api.ID) (int, error) {
	return Forget(dir, func(m api.MessageUpsert, _ api.ID) bool { return m.Author.ID == author })
}

// ForgetAuthor is ForgetAuthor on the spool's own directory.
func (s *Spool) ForgetAuthor(author api.ID) (int, error) { return ForgetAuthor(s.dir, author) }
