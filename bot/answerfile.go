package bot

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"dsearch/shared/api"
)

// SPOOL/answers is the record of what public answers quote (answers.go):
// on disk, so that a restart keeps it.

func loadAnswers(dir string, log *slog.Logger) (*answers, error) {
	s := &answers{path: filepath.Join(dir, answersFile), log: log, max: maxAnswers, work: make(chan struct{}, 1), check: make(chan struct{}, 1)}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &s.list); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return s, nil
}

// save writes the record (0600) and syncs it, in place of the old one.
// s.mu is held.
func (s *answers) save() error {
	data, err := json.Marshal(s.list)
	if err != nil {
		return err
	}
	if err := api.ReplaceFile(s.path+".tmp", s.path, data); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(s.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (s *answers) saveLogged() {
	if err := s.save(); err != nil {
		s.log.Error("cannot write SPOOL/answers: what public answers quote may not be withdrawn after a restart", "err", err)
	}
}
