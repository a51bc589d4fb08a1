// Package spool keeps message batches on disk until searchd has them, so
// a searchd restart or outage loses nothing. Batches are files named by a
// growing sequence number and are delivered strictly in that order, one
// at a time; a batch is removed only after searchd accepted it. Sending a
// batch twice (a crash between acceptance and removal) is harmless:
// searchd's upserts are idempotent.
package spool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"dsearch/shared/api"
)

// batchFile is one waiting batch.
type batchFile struct {
	seq  uint64
	size int64
}

// ErrFull is returned by Put when the spool holds its maximum size.
var ErrFull = errors.New("spool: full")

// Spool is a bounded, ordered, on-disk queue of batches.
type Spool struct {
	dir      string
	maxBytes int64
	log      *slog.Logger

	mu    sync.Mutex
	next  uint64      // sequence number of the next Put
	queue []batchFile // waiting, oldest first
	size  int64
	kick  chan struct{}
}

const suffix = ".json"

// Open opens (creating, mode 0700) the spool in dir, keeping what an
// earlier run left there.
func Open(dir string, maxBytes int64, log *slog.Logger) (*Spool, error) {
	if err := os.MkdirAll(filepath.Join(dir, "rejected"), 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	s := &Spool{dir: dir, maxBytes: maxBytes, log: log, kick: make(chan struct{}, 1), next: 1}
	entries, err := os.ReadDir(dir) // sorted by name: zero-padded sequence numbers, oldest first
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".tmp") {
			os.Remove(filepath.Join(dir, name)) // a Put cut short: never acknowledged
			continue
		}
		seq, err := strconv.ParseUint(strings.TrimSuffix(name, suffix), 10, 64)
		if err != nil || !strings.HasSuffix(name, suffix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		s.queue = append(s.queue, batchFile{seq, info.Size()})
		s.size += info.Size()
		s.next = max(s.next, seq+1)
	}
	// Numbers already used by rejected batches are not reused: a later
	// rejection would overwrite one.
	rejected, err := Rejected(dir)
	if err != nil {
		return nil, err
	}
	for _, p := range rejected {
		if seq, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), suffix), 10, 64); err == nil {
			s.next = max(s.next, seq+1)
		}
	}
	return s, nil
}

// Put stores a batch durably. It fails with ErrFull rather than grow past
// the bound.
func (s *Spool) Put(b *api.MessageBatch) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.size+int64(len(data)) > s.maxBytes {
		return ErrFull
	}
	seq := s.next
	tmp, err := os.CreateTemp(s.dir, ".tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path(seq))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("spool: %w", err)
	}
	s.next++
	s.queue = append(s.queue, batchFile{seq, int64(len(data))})
	s.size += int64(len(data))
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return nil
}

// Len is the number of batches waiting.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Size is the bytes waiting.
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// Sender delivers one batch; PostMessages of shared/client fits.
type Sender func(context.Context, *api.MessageBatch) error

// Run delivers batches in order until ctx ends. A batch searchd cannot
// take now (down, restarting, overloaded, a failure of its own, even a
// refusal it does not explain) is retried with backoff: nothing is set
// aside for a passing cause. Only one searchd refuses for what the batch
// holds (api.CodeBadBatch) would never pass, so it moves to rejected/
// (kept for a person to look at, and ReplayRejected) instead of blocking
// everything behind it.
func (s *Spool) Run(ctx context.Context, send Sender) {
	backoff := time.Duration(0)
	for {
		seq, ok := s.oldest()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-s.kick:
				continue
			}
		}
		err := s.deliver(ctx, seq, send)
		switch {
		case err == nil:
			backoff = 0
			continue
		case ctx.Err() != nil:
			return
		case api.BadBatch(err):
			s.log.Warn("searchd refused a batch; kept in rejected/", "batch", seq, "err", err)
			s.reject(seq)
			continue
		}
		backoff = min(max(2*backoff, 100*time.Millisecond), 10*time.Second)
		what := "searchd unavailable; batch kept for retry"
		if errors.As(err, new(*api.Error)) {
			what = "searchd did not take a batch; kept for retry"
		}
		s.log.Warn(what, "batch", seq, "waiting", s.Len(), "retry_in", backoff, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

func (s *Spool) deliver(ctx context.Context, seq uint64, send Sender) error {
	data, err := os.ReadFile(s.path(seq))
	if err != nil {
		return err
	}
	var b api.MessageBatch
	if err := json.Unmarshal(data, &b); err != nil {
		return &api.Error{Status: http.StatusBadRequest, Message: "unreadable spool file: " + err.Error(), Code: api.CodeBadBatch}
	}
	if err := send(ctx, &b); err != nil {
		return err
	}
	s.remove(seq, os.Remove(s.path(seq)))
	return nil
}

func (s *Spool) reject(seq uint64) {
	err := os.Rename(s.path(seq), filepath.Join(s.dir, "rejected", filepath.Base(s.path(seq))))
	s.remove(seq, err)
}

func (s *Spool) remove(seq uint64, err error) {
	if err != nil {
		s.log.Error("spool: cannot remove a delivered batch; it will be sent again after a restart", "batch", seq, "err", err)
	}
	s.mu.Lock()
	// Only the oldest batch is ever delivered or rejected.
	s.size -= s.queue[0].size
	s.queue = s.queue[1:]
	s.mu.Unlock()
}

func (s *Spool) oldest() (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return 0, false
	}
	return s.queue[0].seq, true
}

// Rejected lists the batches set aside in dir's rejected/, oldest first.
func Rejected(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "rejected", "*"+suffix))
	sort.Strings(paths) // zero-padded sequence numbers
	return paths, err
}

// ReplayResult is what ReplayRejected did with one rejected batch.
type ReplayResult struct {
	Path string
	Err  error // nil: delivered and removed
}

// ReplayRejected sends the batches in dir's rejected/ to searchd again,
// oldest first, removing each one searchd takes; one it refuses again
// stays. It stops at the first failure that is not such a refusal
// (searchd down), returning it. It is safe while the bot runs: searchd
// never lets an older copy of a message undo a newer edit or a deletion.
func ReplayRejected(ctx context.Context, dir string, send Sender) ([]ReplayResult, error) {
	paths, err := Rejected(dir)
	if err != nil {
		return nil, err
	}
	var out []ReplayResult
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return out, err
		}
		var b api.MessageBatch
		if err := json.Unmarshal(data, &b); err != nil {
			out = append(out, ReplayResult{p, fmt.Errorf("unreadable: %w", err)})
			continue
		}
		err = send(ctx, &b)
		switch {
		case err == nil:
			err = os.Remove(p)
		case !api.BadBatch(err):
			return out, err
		}
		out = append(out, ReplayResult{p, err})
	}
	return out, nil
}

func (s *Spool) path(seq uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%020d%s", seq, suffix))
}
