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
