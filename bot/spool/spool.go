// Package spool keeps message batches on disk until searchd has them, so
// a searchd restart or outage loses nothing. Batches are files named by a
// growing sequence number and are delivered strictly in that order, one
// at a time; a batch is removed only after searchd accepted it. Sending a
// batch twice (a crash between acceptance and removal) is harmless:
// searchd's upserts are idempotent.
//
// A batch is durable when Put returns: its file is synced, renamed to
// its number and the directory synced, so a power cut keeps it. The
// directory is locked (an flock on DIR/lock) for as long as a Spool is
// open: two bots on one spool would number their batches alike and
// overwrite each other's.
package spool

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"dsearch/shared/api"
	"dsearch/shared/spoolforget"
)

// batchFile is one waiting batch.
type batchFile struct {
	seq  uint64
	size int64
}

// ErrFull is returned by Put when the spool holds its maximum size.
var ErrFull = errors.New("spool: full")

// ErrLocked means another process (or another open Spool) has the
// spool directory.
var ErrLocked = errors.New("spool: directory in use")

// LockName is the spool directory's lock file.
const LockName = "lock"

// Spool is a bounded, ordered, on-disk queue of batches.
type Spool struct {
	dir      string
	maxBytes int64
	log      *slog.Logger
	lock     *os.File

	mu    sync.Mutex
	next  uint64      // sequence number of the next Put
	queue []batchFile // waiting, oldest first
	size  int64
	kick  chan struct{}

	// SetAsideAfter and SetAsideAge: once searchd has refused the
	// oldest batch this many times over at least this long, without
	// calling it bad (a 5xx or a plain 4xx it answers every time), Run
	// offers it the batch behind; if searchd takes that one, the
	// refusal is the oldest batch's own and it is set aside as a bad
	// one is (setAside). A searchd refusing everything (down, its disk
	// full) sets nothing aside. Zero: the defaults. Set before Run.
	SetAsideAfter int
	SetAsideAge   time.Duration
	// Watch, if set, is called as the oldest batch starts to be split,
	// and what it returns once its refused part is in rejected/: what
	// searchd removed meanwhile (past the waiting spool: a catch-up's
	// deletion) is taken out of it then.
	Watch func() (done func())
}

// Defaults of Spool.SetAsideAfter and SetAsideAge: long enough that a
// passing refusal of one batch (a timeout under load) is not taken for a
// lasting one, short enough that the catch-ups held behind it (each
// warns after 10 minutes, bot/backfill.go) do not wait for long.
const (
	setAsideAfter = 10
	setAsideAge   = 10 * time.Minute
)

const suffix = ".json"

// Open opens (creating, mode 0700) the spool in dir, keeping what an
// earlier run left there, and locks it until Close. A batch file an
// earlier run wrote completely but had not renamed yet (a crash or power
// cut between the two) is recovered under its number; a partial one was
// never stored and is removed.
func Open(dir string, maxBytes int64, log *slog.Logger) (*Spool, error) {
	if err := os.MkdirAll(filepath.Join(dir, "rejected"), 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	s := &Spool{dir: dir, maxBytes: maxBytes, log: log, lock: lock, kick: make(chan struct{}, 1), next: 1}
	if err := s.load(); err != nil {
		lock.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the spool directory's lock; the Spool must not be used
// after it.
func (s *Spool) Close() error { return s.lock.Close() }

// lockDir takes dir's exclusive flock, which the kernel drops when the
// process ends, however it ends. The holder's pid is written in the file
// for the message a second bot gets.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := ""
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil {
				holder = fmt.Sprintf(" (pid %d)", pid)
			}
			return nil, fmt.Errorf("%w: %s is used by another dsearch-bot%s; give each bot its own --spool", ErrLocked, dir, holder)
		}
		return nil, fmt.Errorf("spool lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// load reads what an earlier run left in the directory.
func (s *Spool) load() error {
	for _, d := range []string{s.dir, filepath.Join(s.dir, "rejected")} {
		if err := removeForgetCopies(d); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	var tmps []string
	for _, e := range entries {
		name := e.Name()
		if isTemporaryBatch(name) {
			tmps = append(tmps, name)
			continue
		}
		seq, ok := batchSeq(name)
		if !ok {
			continue // the lock, rejected/, anything a person left here
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		s.queue = append(s.queue, batchFile{seq, info.Size()})
		s.size += info.Size()
		s.next = max(s.next, seq+1)
	}
	// Numbers already used by rejected batches are not reused: a later
	// rejection would overwrite one.
	rejected, err := Rejected(s.dir)
	if err != nil {
		return err
	}
	for _, p := range rejected {
		if seq, ok := batchSeq(filepath.Base(p)); ok {
			s.next = max(s.next, seq+1)
		}
	}
	for _, name := range tmps {
		if err := s.recover(name); err != nil {
			return err
		}
	}
	sort.Slice(s.queue, func(i, j int) bool { return s.queue[i].seq < s.queue[j].seq })
	if len(tmps) > 0 {
		return syncDir(s.dir)
	}
	return nil
}

// recover keeps a temporary batch file that holds a whole batch (it was
// synced before its rename, which a crash lost) under the number it was
// written for, or the next free one for a file an older version named
// without it; a partial file was never acknowledged and is removed.
func (s *Spool) recover(name string) error {
	path := filepath.Join(s.dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var b api.MessageBatch
	if json.Unmarshal(data, &b) != nil {
		s.log.Warn("spool: removing a batch file cut short before it was stored", "file", name, "bytes", len(data))
		return os.Remove(path)
	}
	seq, ok := batchSeq(strings.TrimPrefix(name, tmpPrefix))
	if !ok || exists(s.path(seq)) || s.rejectedExists(seq) {
		seq = s.next
	}
	if err := os.Rename(path, s.path(seq)); err != nil {
		return err
	}
	s.log.Info("spool: recovered a batch written before a crash", "batch", seq)
	s.queue = append(s.queue, batchFile{seq, int64(len(data))})
	s.size += int64(len(data))
	s.next = max(s.next, seq+1)
	return nil
}

func (s *Spool) rejectedExists(seq uint64) bool {
	return exists(filepath.Join(s.dir, "rejected", filepath.Base(s.path(seq))))
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// batchSeq reads a batch file's name (api.IsSpoolBatch): its
// zero-padded sequence number.
func batchSeq(name string) (uint64, bool) {
	if !api.IsSpoolBatch(name) {
		return 0, false
	}
	seq, err := strconv.ParseUint(strings.TrimSuffix(name, suffix), 10, 64)
	return seq, err == nil && seq > 0
}

// Waiting lists the batches waiting in dir, oldest first, without
// opening (or locking) the spool: what dsearch-bot --check counts. Files
// that are not batches are left out (api.IsSpoolBatch).
func Waiting(dir string) ([]string, error) { return api.SpoolBatches(dir) }

// tmpPrefix starts the name of a batch file being written.
const tmpPrefix = ".tmp"

// isTemporaryBatch tells a batch file being written: ".tmp" and its
// number (or, from older versions, ".tmp" and random digits). Other
// files in the directory (the bot's marks and their own temporary
// files) are not batches.
func isTemporaryBatch(name string) bool {
	rest, ok := strings.CutPrefix(name, tmpPrefix)
	if !ok || rest == "" {
		return false
	}
	if _, ok := batchSeq(rest); ok {
		return true
	}
	return strings.Trim(rest, "0123456789") == ""
}

// syncDir makes the names in dir durable (a rename is an entry in the
// directory, which a file's own fsync does not cover). A variable so that
// tests can make it fail.
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Put stores a batch durably. It fails with ErrFull rather than grow past
// the bound with messages; a batch of removals alone (deletions, forgotten
// channels and servers: a few bytes each) is taken past it, since what was
// deleted must stay deleted across a restart while searchd is away, and
// Discord cannot tell a catch-up what it no longer has beyond its last
// page.
func (s *Spool) Put(b *api.MessageBatch) error {
	_, err := s.PutSeq(b)
	return err
}

// PutSeq is Put, and tells the batch's number (for ForgetWaiting).
func (s *Spool) PutSeq(b *api.MessageBatch) (uint64, error) {
	data, err := json.Marshal(b)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	removals := len(b.Messages) == 0 && len(b.Guilds) == 0 && len(b.Channels) == 0
	if s.size+int64(len(data)) > s.maxBytes && !removals {
		return 0, ErrFull
	}
	seq := s.next
	if err := s.write(seq, data); err != nil {
		return 0, fmt.Errorf("spool: %w", err)
	}
	s.next++
	s.queue = append(s.queue, batchFile{seq, int64(len(data))})
	s.size += int64(len(data))
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return seq, nil
}

// write stores data as batch seq: synced, renamed, and the rename synced
// too, so that a power cut keeps it. It leaves nothing behind when it
// fails.
func (s *Spool) write(seq uint64, data []byte) error {
	tmp := filepath.Join(s.dir, tmpPrefix+filepath.Base(s.path(seq)))
	if err := api.ReplaceFile(tmp, s.path(seq), data); err != nil {
		return err
	}
	if err := syncDir(s.dir); err != nil {
		os.Remove(s.path(seq)) // not known to be durable: not acknowledged
		return err
	}
	return nil
}

// Len is the number of batches waiting.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Last is the sequence number of the newest batch Put (0: none yet).
func (s *Spool) Last() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next - 1
}

// Delivered reports whether batch seq and every batch before it have left
// the spool: searchd took them, or refused them for good (rejected/).
// Unlike Len() == 0, it is reached while live batches keep coming.
func (s *Spool) Delivered(seq uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) == 0 || s.queue[0].seq > seq
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
	// The oldest batch's refusals by searchd (answers, not a searchd
	// away), and since when.
	var refusedSeq uint64
	var refusals int
	var refusedSince time.Time
	split := false // offered in halves, in order, once
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
		if seq != refusedSeq {
			refusedSeq, refusals, split = seq, 0, false
		}
		err := s.deliver(ctx, seq, send)
		switch {
		case err == nil:
			backoff = 0
			continue
		case ctx.Err() != nil:
			return
		case api.BadBatch(err):
			if s.setAside(ctx, seq, send, err, true) {
				backoff = 0
				continue
			}
		case errors.As(err, new(*api.Error)):
			if refusals == 0 {
				refusedSince = time.Now()
			}
			refusals++
			if !s.SetAsideDue(refusals, refusedSince) {
				break
			}
			// Proof that the refusal is the batch's own: searchd takes a
			// part of it (in order), or else the batch behind it.
			if !split {
				split = true
				if s.setAside(ctx, seq, send, err, false) {
					backoff = 0
					continue
				}
			}
			if s.takesTheNext(ctx, seq, send) && s.setAside(ctx, seq, send, err, true) {
				backoff = 0
				continue
			}
		}
		if ctx.Err() != nil {
			return
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
	b, err := s.read(seq)
	if err != nil {
		return err
	}
	// One ForgetWaiting emptied has nothing for searchd.
	if b.Items() > 0 {
		if err := send(ctx, b); err != nil {
			return err
		}
	}
	s.remove(seq, func() error { return os.Remove(s.path(seq)) })
	return nil
}

// SetAsideDue reports whether a batch searchd refused refusals times,
// the first at since, without calling it bad, has been refused long
// enough to be set aside if the refusal is its own (SetAsideAfter,
// SetAsideAge).
func (s *Spool) SetAsideDue(refusals int, since time.Time) bool {
	return refusals >= cmp.Or(s.SetAsideAfter, setAsideAfter) && time.Since(since) >= cmp.Or(s.SetAsideAge, setAsideAge)
}

// SetAsideRefused is setAside for a batch sent straight to searchd (a
// catch-up's page), which searchd refused with cause: it is offered again
// in halves, and what searchd refuses alone is kept in rejected/ under a
// number of its own. Unless cause is bad_batch or proven (searchd took
// other batches meanwhile: the refusal is this one's), a batch searchd
// takes nothing of is not set aside; it returns false then, and when
// searchd stops answering.
func (s *Spool) SetAsideRefused(ctx context.Context, b *api.MessageBatch, send Sender, cause error, proven bool) bool {
	refused, ok := splitRefused(ctx, b, send, cause, proven)
	if !ok {
		return false
	}
	if refused.Items() > 0 {
		data, err := json.Marshal(refused)
		if err != nil {
			return false
		}
		s.mu.Lock()
		seq := s.next
		s.next++
		tmp := filepath.Join(s.dir, "rejected", "."+filepath.Base(s.path(seq))+spoolforget.CopySuffix)
		err = api.ReplaceFile(tmp, s.rejectedPath(seq), data)
		s.mu.Unlock()
		if err != nil {
			s.log.Error("spool: cannot keep what searchd refused in rejected/", "err", err)
			return false
		}
	}
	s.logSetAside(0, refused, b.Items()-refused.Items(), cause)
	return true
}

// read decodes batch seq; an unreadable one is a bad batch.
func (s *Spool) read(seq uint64) (*api.MessageBatch, error) {
	data, err := os.ReadFile(s.path(seq))
	if err != nil {
		return nil, err
	}
	var b api.MessageBatch
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, &api.Error{Status: http.StatusBadRequest, Message: "unreadable spool file: " + err.Error(), Code: api.CodeBadBatch}
	}
	return &b, nil
}

// takesTheNext offers searchd the batch behind seq, which it keeps
// refusing: whether it took it (then removed). One it refuses as bad
// is set aside too.
func (s *Spool) takesTheNext(ctx context.Context, seq uint64, send Sender) bool {
	s.mu.Lock()
	var next uint64
	if len(s.queue) > 1 && s.queue[0].seq == seq {
		next = s.queue[1].seq
	}
	s.mu.Unlock()
	if next == 0 {
		return false // nothing behind it holds anything back yet
	}
	b, err := s.read(next)
	if err == nil && b.Items() == 0 {
		s.deliver(ctx, next, send) // dropped unsent: no sign searchd takes anything
		return false
	}
	err = s.deliver(ctx, next, send)
	if api.BadBatch(err) {
		s.setAside(ctx, next, send, err, true)
	}
	return err == nil
}

// setAside moves batch seq, refused by searchd with cause, to rejected/
// (for a person, and --replay-rejected) instead of blocking everything
// behind it. Only what searchd refuses on its own goes there: the batch
// is offered again in halves, down to single items, so that one bad
// message does not keep the rest from searchd (a deletion above all:
// Discord cannot tell a catch-up what it deleted). It returns false,
// leaving the batch to wait, when searchd stops answering meanwhile; what
// it took is harmlessly sent again.
//
// Unless cause is bad_batch or proven (searchd took the batch behind it),
// a batch searchd takes nothing of is not set aside: searchd may be
// refusing everything.
func (s *Spool) setAside(ctx context.Context, seq uint64, send Sender, cause error, proven bool) bool {
	if s.Watch != nil {
		defer s.Watch()()
	}
	b, err := s.read(seq)
	if err != nil {
		if api.BadBatch(err) { // unreadable: kept whole for a person
			s.log.Warn("searchd refused a batch; kept in rejected/", "batch", seq, "err", err)
			s.remove(seq, func() error { return os.Rename(s.path(seq), s.rejectedPath(seq)) })
			return true
		}
		return false
	}
	refused, ok := splitRefused(ctx, b, send, cause, proven)
	if !ok {
		return false
	}
	var left api.MessageBatch
	s.remove(seq, func() error {
		// What ForgetWaiting took out of the batch meanwhile stays out.
		now, err := s.read(seq)
		if err != nil {
			return err
		}
		left = keep(now, refused)
		if left.Items() > 0 {
			data, err := json.Marshal(&left)
			if err != nil {
				return err
			}
			tmp := filepath.Join(s.dir, "rejected", "."+filepath.Base(s.path(seq))+spoolforget.CopySuffix)
			if err := api.ReplaceFile(tmp, s.rejectedPath(seq), data); err != nil {
				return err
			}
		}
		return os.Remove(s.path(seq))
	})
	s.logSetAside(seq, &left, b.Items()-refused.Items(), cause)
	return true
}

// logSetAside tells what a refused batch (seq; 0: a catch-up's page) left
// in rejected/: counts, never text.
func (s *Spool) logSetAside(seq uint64, left *api.MessageBatch, taken int, cause error) {
	if left.Items() == 0 {
		s.log.Info("searchd took a batch it had refused once it was sent in parts", "batch", seq, "taken", taken, "err", cause)
		return
	}
	s.log.Warn("searchd refused part of a batch; that part is kept in SPOOL/rejected/, the rest taken (dsearch-bot --check fails until it is replayed or removed)",
		"batch", seq, "refused_messages", len(left.Messages), "refused_deletions", len(left.Deletes)+len(left.ForgetChannels)+len(left.ForgetGuilds),
		"refused_places", len(left.Guilds)+len(left.Channels), "taken", taken, "err", cause)
}

func (s *Spool) rejectedPath(seq uint64) string {
	return filepath.Join(s.dir, "rejected", filepath.Base(s.path(seq)))
}

// splitRefused is refusedAlone on b, refused whole with cause: what
// searchd refused alone, and false when searchd stopped answering or,
// unless cause is bad_batch or proven, took none of it.
func splitRefused(ctx context.Context, b *api.MessageBatch, send Sender, cause error, proven bool) (*api.MessageBatch, bool) {
	refused, err := refusedAlone(ctx, b, send, true)
	if err != nil || !proven && !api.BadBatch(cause) && refused.Items() == b.Items() {
		return nil, false
	}
	return refused, true
}

// refusedAlone sends b in halves, each half searchd refuses in halves
// again, and returns the items it refused alone; refused: b was refused
// whole already. It stops at a failure that is no answer of searchd's
// (searchd away, ctx ended).
func refusedAlone(ctx context.Context, b *api.MessageBatch, send Sender, refused bool) (*api.MessageBatch, error) {
	if !refused {
		err := send(ctx, b)
		switch {
		case err == nil:
			return &api.MessageBatch{}, nil
		case ctx.Err() != nil || !errors.As(err, new(*api.Error)):
			return nil, err
		}
	}
	if b.Items() <= 1 {
		return b, nil
	}
	var out api.MessageBatch
	for _, half := range Split(b, (b.Items()+1)/2) { // halves (more where a half is over maxBatchBytes)
		r, err := refusedAlone(ctx, half, send, false)
		if err != nil {
			return nil, err
		}
		out.Guilds = append(out.Guilds, r.Guilds...)
		out.Channels = append(out.Channels, r.Channels...)
		out.Messages = append(out.Messages, r.Messages...)
		out.Deletes = append(out.Deletes, r.Deletes...)
		out.ForgetChannels = append(out.ForgetChannels, r.ForgetChannels...)
		out.ForgetGuilds = append(out.ForgetGuilds, r.ForgetGuilds...)
	}
	return &out, nil
}

// keep is the part of b that refused names (by kind and ID).
func keep(b, refused *api.MessageBatch) api.MessageBatch {
	type key struct {
		kind byte
		id   api.ID
	}
	names := map[key]bool{}
	for _, g := range refused.Guilds {
		names[key{'g', g.ID}] = true
	}
	for _, c := range refused.Channels {
		names[key{'c', c.ID}] = true
	}
	for _, m := range refused.Messages {
		names[key{'m', m.ID}] = true
	}
	for _, id := range refused.Deletes {
		names[key{'d', id}] = true
	}
	for _, id := range refused.ForgetChannels {
		names[key{'C', id}] = true
	}
	for _, id := range refused.ForgetGuilds {
		names[key{'G', id}] = true
	}
	var out api.MessageBatch
	for _, g := range b.Guilds {
		if names[key{'g', g.ID}] {
			out.Guilds = append(out.Guilds, g)
		}
	}
	for _, c := range b.Channels {
		if names[key{'c', c.ID}] {
			out.Channels = append(out.Channels, c)
		}
	}
	for _, m := range b.Messages {
		if names[key{'m', m.ID}] {
			out.Messages = append(out.Messages, m)
		}
	}
	for _, id := range b.Deletes {
		if names[key{'d', id}] {
			out.Deletes = append(out.Deletes, id)
		}
	}
	for _, id := range b.ForgetChannels {
		if names[key{'C', id}] {
			out.ForgetChannels = append(out.ForgetChannels, id)
		}
	}
	for _, id := range b.ForgetGuilds {
		if names[key{'G', id}] {
			out.ForgetGuilds = append(out.ForgetGuilds, id)
		}
	}
	return out
}

// remove takes batch seq off the queue, its file with it (op), under the
// lock: a ForgetWaiting rewriting it meanwhile would bring the file back.
// It is the oldest, or the one behind it (takesTheNext).
func (s *Spool) remove(seq uint64, op func() error) {
	s.mu.Lock()
	err := op()
	if i := slices.IndexFunc(s.queue, func(bf batchFile) bool { return bf.seq == seq }); i >= 0 {
		s.size -= s.queue[i].size
		s.queue = slices.Delete(s.queue, i, i+1)
	}
	s.mu.Unlock()
	if err != nil {
		s.log.Error("spool: cannot remove a delivered batch; it will be sent again after a restart", "batch", seq, "err", err)
	}
}

// Oldest is the sequence number of the oldest batch waiting (false:
// none), the one Run is delivering.
func (s *Spool) Oldest() (uint64, bool) { return s.oldest() }

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
	return api.SpoolBatches(filepath.Join(dir, "rejected"))
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
// Each batch is read, sent and removed under rejected/'s lock: a Forget
// (the bot's, or searchd forget's) rewriting it meanwhile would see its
// work undone by the old copy sent.
func ReplayRejected(ctx context.Context, dir string, send Sender) ([]ReplayResult, error) {
	paths, err := Rejected(dir)
	if err != nil {
		return nil, err
	}
	var out []ReplayResult
	for _, p := range paths {
		res, err := replayOne(ctx, dir, p, send)
		if res != nil {
			out = append(out, *res)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// replayOne is ReplayRejected on the batch at p: its result (nil: gone
// meanwhile), and the failure that stops the replay.
func replayOne(ctx context.Context, dir, p string, send Sender) (*ReplayResult, error) {
	lock, err := lockRejected(dir)
	if lock == nil || err != nil {
		return nil, err
	}
	defer lock.Close()
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // a Forget took everything out of it
	}
	if err != nil {
		return nil, err
	}
	var b api.MessageBatch
	if err := json.Unmarshal(data, &b); err != nil {
		return &ReplayResult{p, fmt.Errorf("unreadable: %w", err)}, nil
	}
	err = send(ctx, &b)
	switch {
	case err == nil:
		err = os.Remove(p)
	case !api.BadBatch(err):
		return nil, err
	}
	return &ReplayResult{p, err}, nil
}

func (s *Spool) path(seq uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%020d%s", seq, suffix))
}
