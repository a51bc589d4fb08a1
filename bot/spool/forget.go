package spool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"dsearch/shared/api"
)

// ForgetAuthor takes a member's messages out of the batches kept in dir's
// rejected/ (the bot calls it when the member opts out): searchd would
// drop them at a replay anyway, but the files would keep their text on
// disk until then. Each changed batch is rewritten (synced, renamed); one
// left with nothing is removed. It returns the messages taken out.
//
// A partial update that does not name its author cannot be told apart
// and stays; searchd skips it at a replay (its message is tombstoned).
func ForgetAuthor(dir string, author api.ID) (int, error) {
	paths, err := Rejected(dir)
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, p := range paths {
		n, err := forgetAuthorIn(p, author)
		removed += n
		if err != nil {
			return removed, fmt.Errorf("spool: %s: %w", filepath.Base(p), err)
		}
	}
	if removed > 0 {
		if err := syncDir(filepath.Join(dir, "rejected")); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

func forgetAuthorIn(path string, author api.ID) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var b api.MessageBatch
	if err := json.Unmarshal(data, &b); err != nil {
		return 0, nil // unreadable: searchd refuses it whole; a person looks at it
	}
	kept := b.Messages[:0]
	for _, m := range b.Messages {
		if m.Author.ID != author {
			kept = append(kept, m)
		}
	}
	removed := len(b.Messages) - len(kept)
	if removed == 0 {
		return 0, nil
	}
	b.Messages = kept
	if b.Items() == 0 {
		return removed, os.Remove(path)
	}
	if data, err = json.Marshal(&b); err != nil {
		return 0, err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".forget")
	if err := replaceFile(tmp, path, data); err != nil {
		return 0, err
	}
	return removed, nil
}

// ForgetAuthor is ForgetAuthor on the spool's own directory.
func (s *Spool) ForgetAuthor(author api.ID) (int, error) { return ForgetAuthor(s.dir, author) }
