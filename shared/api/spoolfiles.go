package api

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// IsSpoolBatch tells the file name of a batch in the bot's spool (or its
// rejected/): a 20-digit sequence number and ".json". The other files
// there (the bot's marks and status, its lock, a person's notes or
// copies) are not batches, and nothing counts them as waiting.
func IsSpoolBatch(name string) bool {
	digits, ok := strings.CutSuffix(name, ".json")
	return ok && len(digits) == 20 && strings.Trim(digits, "0123456789") == ""
}

// SpoolBatches lists the batches in dir, oldest first (their names sort
// by number); a missing dir has none.
func SpoolBatches(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if IsSpoolBatch(e.Name()) && e.Type().IsRegular() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// ReplaceFile writes data in place of the spool's file at path (a batch,
// the answers record): a copy at tmp, 0600 and synced, renamed over it,
// so that a crash leaves the old file or the new one whole. The caller
// syncs the directory. tmp is removed on an error.
func ReplaceFile(tmp, path string, data []byte) error {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
