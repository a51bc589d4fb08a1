package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
)

// What searchd forget forgets is taken out of the batches searchd refused
// from the bot too (SPOOL/rejected/, in the bot's default spool,
// DATA/bot-spool): their text would stay on disk, and dsearch-bot
// --replay-rejected would store them again, as they were never stored
// and left no tombstone. The files are rewritten under rejected/'s flock,
// which the bot takes to rewrite them too (bot/spool.Forget), and to
// replay each (bot/spool.ReplayRejected: forget cleans them before its
// database forget, which a replay could otherwise pass), the same way: synced, then renamed over the batch (a copy a crash leaves,
// .NAME.forget, the bot removes when it opens its spool); a batch left
// with nothing is removed. The batches still waiting for searchd are the
// running bot's, which keeps their sizes: they are delivered as messages
// written since.

// forgetStep, when set (tests), runs once searchd forget's database
// forget is done.
var forgetStep func(step string)

// forgetRejected takes out of dir's rejected batches the messages f
// selects, channels being f's channel with its threads (the batches'
// placements add theirs). It returns the messages taken out.
func forgetRejected(dir string, f sqlite.ForgetFilter, channels map[int64]bool) (int, error) {
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
		return 0, fmt.Errorf("%s: lock: %w", rej, err)
	}
	paths, err := api.SpoolBatches(rej)
	if err != nil {
		return 0, err
	}
	batches := make([]*api.MessageBatch, len(paths))
	parent := map[api.ID]api.ID{}
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		var b api.MessageBatch
		if json.Unmarshal(data, &b) != nil {
			continue // unreadable: searchd refuses it whole; a person looks at it
		}
		batches[i] = &b
		for _, c := range b.Channels {
			if c.ParentID != 0 {
				parent[c.ID] = c.ParentID
			}
		}
	}
	selected := func(m api.MessageUpsert) bool {
		return (f.Author == 0 || int64(m.Author.ID) == f.Author) &&
			(f.Channel == 0 || channels[int64(m.ChannelID)] || channels[int64(parent[m.ChannelID])]) &&
			(f.Before == 0 || m.CreatedAt.UnixMicro() < f.Before)
	}
	removed, changed := 0, false
	for i, b := range batches {
		if b == nil {
			continue
		}
		kept := b.Messages[:0]
		for _, m := range b.Messages {
			if !selected(m) {
				kept = append(kept, m)
			}
		}
		if len(kept) == len(b.Messages) {
			continue
		}
		removed, changed = removed+len(b.Messages)-len(kept), true
		b.Messages = kept
		if b.Items() == 0 {
			if err := os.Remove(paths[i]); err != nil {
				return removed, err
			}
			continue
		}
		if err := rewriteBatch(paths[i], b); err != nil {
			return removed, err
		}
	}
	if changed {
		return removed, lock.Sync()
	}
	return removed, nil
}

// rewriteBatch writes b in place of the batch at path: a synced copy
// renamed over it.
func rewriteBatch(path string, b *api.MessageBatch) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	return api.ReplaceFile(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".forget"), path, data)
}
