package spool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"dsearch/shared/api"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func batch(id api.ID) *api.MessageBatch { return &api.MessageBatch{Deletes: []api.ID{id}} }

// recorder is a searchd that is down until told otherwise.
type recorder struct {
	mu   sync.Mutex
	up   bool
	got  []api.ID
	bad  api.ID // refused as a bad request
	done chan struct{}
	want int
}

func (r *recorder) send(_ context.Context, b *api.MessageBatch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.up {
		return errors.New("searchd is not reachable: connection refused")
	}
	if b.Deletes[0] == r.bad {
		return &api.Error{Status: 400, Message: "messages[0]: id is required", Code: api.CodeBadBatch}
	}
	r.got = append(r.got, b.Deletes[0])
	if len(r.got) == r.want {
		close(r.done)
	}
	return nil
}

func TestOrderedReplayAfterOutageAndRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	for id := api.ID(1); id <= 3; id++ {
		if err := s.Put(batch(id)); err != nil {
			t.Fatal(err)
		}
	}
	// searchd is down: a first run keeps everything.
	r := &recorder{done: make(chan struct{}), want: 5, bad: 4}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { s.Run(ctx, r.send); close(stopped) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	<-stopped
	if s.Len() != 3 {
		t.Fatalf("%d batches left after failures, want 3", s.Len())
	}
	s.Close()
	// The bot restarts: a new spool over the same directory, more batches.
	s = openSpool(t, dir)
	for id := api.ID(4); id <= 6; id++ {
		if err := s.Put(batch(id)); err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	r.up = true
	r.mu.Unlock()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, r.send)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("delivered %v", r.got)
	}
	want := []api.ID{1, 2, 3, 5, 6}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) != len(want) {
		t.Fatalf("delivered %v, want %v", r.got, want)
	}
	for i := range want {
		if r.got[i] != want[i] {
			t.Fatalf("delivered %v, want %v in order", r.got, want)
		}
	}
	if rej, _ := os.ReadDir(filepath.Join(dir, "rejected")); len(rej) != 1 {
		t.Errorf("%d rejected files, want the refused batch kept", len(rej))
	}
}

// The spool refuses messages past its bound, and takes removals
// (deletions, forgotten places) past it: a few bytes each, and what was
// deleted must stay deleted across a restart while searchd is away.
func TestBound(t *testing.T) {
	s, err := Open(t.TempDir(), 600, quiet)
	if err != nil {
		t.Fatal(err)
	}
	msg := func(id api.ID) *api.MessageBatch {
		return &api.MessageBatch{Messages: []api.MessageUpsert{{ID: id, ChannelID: 1, Content: "hello"}}}
	}
	var n int
	for ; n < 10; n++ {
		if err := s.Put(msg(api.ID(n + 1))); err != nil {
			if !errors.Is(err, ErrFull) {
				t.Fatal(err)
			}
			break
		}
	}
	if n == 0 || n == 10 || s.Size() > 600 {
		t.Errorf("stored %d batches, %d bytes, in a 600-byte spool", n, s.Size())
	}
	for _, b := range []*api.MessageBatch{batch(1), {ForgetChannels: []api.ID{2}}, {ForgetGuilds: []api.ID{3}}} {
		if err := s.Put(b); err != nil {
			t.Errorf("removals %+v in a full spool: %v", b, err)
		}
	}
	if err := s.Put(msg(99)); !errors.Is(err, ErrFull) {
		t.Errorf("a message in a spool past its bound: %v, want ErrFull", err)
	}
}

// Only a refusal for the batch's content sets a batch aside; searchd
// restarting (499, 503), failing (500) or refusing without saying the
// batch is at fault (a 400 for an unknown field, from a searchd older
// than the bot) are retried until the batch passes.
func TestRetriesAllButBadBatches(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	for id := api.ID(1); id <= 3; id++ {
		s.Put(batch(id))
	}
	failures := []error{
		&api.Error{Status: 499, Message: "request canceled"},
		&api.Error{Status: 503, Message: "shutting down"},
		&api.Error{Status: 500, Message: "internal error"},
		&api.Error{Status: 400, Message: "invalid JSON body: json: unknown field \"x\""},
		&api.Error{Status: 413, Message: "request body over 8388608 bytes"},
		&api.Error{Status: 403, Message: "peer uid 5 is not allowed"},
	}
	var mu sync.Mutex
	var got []api.ID
	done := make(chan struct{})
	send := func(_ context.Context, b *api.MessageBatch) error {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) > 0 {
			err := failures[0]
			failures = failures[1:]
			return err
		}
		if b.Deletes[0] == 2 {
			return &api.Error{Status: 400, Message: "messages[0]: id is required", Code: api.CodeBadBatch}
		}
		got = append(got, b.Deletes[0])
		if len(got) == 2 {
			close(done)
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, send)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("delivered %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("delivered %v, want [1 3]", got)
	}
	if rej, _ := Rejected(dir); len(rej) != 1 {
		t.Errorf("rejected %v, want only the bad batch", rej)
	}
}

// Rejected batches replay once searchd takes them (after a fix); one it
// refuses again stays, and a new rejection never overwrites an old one.
func TestReplayRejected(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	bad := map[api.ID]bool{1: true, 2: true}
	var mu sync.Mutex
	var got []api.ID
	send := func(_ context.Context, b *api.MessageBatch) error {
		mu.Lock()
		defer mu.Unlock()
		if bad[b.Deletes[0]] {
			return &api.Error{Status: 400, Message: "bad", Code: api.CodeBadBatch}
		}
		got = append(got, b.Deletes[0])
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.Put(batch(1))
	stopped := make(chan struct{})
	go func() { s.Run(ctx, send); close(stopped) }()
	waitLen := func(n int) {
		t.Helper()
		for i := 0; ; i++ {
			if rej, _ := Rejected(dir); len(rej) == n {
				return
			} else if i == 500 {
				t.Fatalf("rejected %v, want %d", rej, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitLen(1)
	cancel()
	<-stopped
	s.Close()
	// The bot restarts with an empty spool: batch 2's number must not be 1.
	s = openSpool(t, dir)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	s.Put(batch(2))
	go s.Run(ctx, send)
	waitLen(2)

	// searchd is fixed for batch 1 only; then it is down.
	mu.Lock()
	delete(bad, 1)
	mu.Unlock()
	res, err := ReplayRejected(context.Background(), dir, send)
	if err != nil || len(res) != 2 || res[0].Err != nil || !api.BadBatch(res[1].Err) {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	if rej, _ := Rejected(dir); len(rej) != 1 || len(got) != 1 || got[0] != 1 {
		t.Errorf("after replay: rejected %v, delivered %v", rej, got)
	}
	down := func(context.Context, *api.MessageBatch) error { return errors.New("searchd is not reachable") }
	if _, err := ReplayRejected(context.Background(), dir, down); err == nil {
		t.Error("replay with searchd down reported success")
	}
	if rej, _ := Rejected(dir); len(rej) != 1 {
		t.Errorf("a failed replay lost a batch: %v", rej)
	}
}

// Two bots on one spool would number their batches alike and overwrite
// each other's: the second is refused until the first closes.
func TestLockedWhileOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	if _, err := Open(dir, 1<<20, quiet); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open on a held spool: %v, want ErrLocked", err)
	}
	s.Close()
	s, err := Open(dir, 1<<20, quiet)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s.Close()
}

// Put returns only after the rename itself is durable (the directory is
// synced once the batch has its name), and a failed sync is a failed Put
// that leaves nothing behind.
func TestPutSyncsDirectoryAfterRename(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	defer s.Close()
	real := syncDir
	defer func() { syncDir = real }()
	var synced []string
	syncDir = func(d string) error {
		if w, _ := Waiting(d); len(w) == 1 {
			synced = append(synced, d)
		}
		return real(d)
	}
	if err := s.Put(batch(1)); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || synced[0] != dir {
		t.Fatalf("directory syncs after the rename: %v, want [%s]", synced, dir)
	}
	syncDir = func(string) error { return errors.New("EIO") }
	if err := s.Put(batch(2)); err == nil {
		t.Fatal("Put succeeded though the directory could not be synced")
	}
	if w, _ := Waiting(dir); s.Len() != 1 || len(w) != 1 {
		t.Errorf("after a failed Put: %d queued, files %v; want only batch 1", s.Len(), w)
	}
}

// A power cut between a batch file's sync and its rename leaves a whole
// batch under its temporary name: it is recovered in its place, not
// deleted; a partial one (never acknowledged) is removed.
func TestRecoversCompleteTemporaryFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	for id := api.ID(1); id <= 3; id++ {
		if err := s.Put(batch(id)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	// Batch 2's rename is lost; batch 4 was cut short; an older version's
	// temporary name holds a whole batch.
	b2 := filepath.Join(dir, fmt.Sprintf("%020d.json", 2))
	if err := os.Rename(b2, filepath.Join(dir, ".tmp"+filepath.Base(b2))); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, fmt.Sprintf(".tmp%020d.json", 4)), []byte(`{"deletes":["4"`), 0o600)
	if err := os.WriteFile(filepath.Join(dir, ".tmp123456"), []byte(`{"deletes":["9"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".sync-marks.tmp42"), []byte(`{}`), 0o600) // the bot's, not a batch

	s = openSpool(t, dir)
	defer s.Close()
	r := &recorder{up: true, done: make(chan struct{}), want: 4}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, r.send)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("delivered %v, want 1 2 3 9", r.got)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if fmt.Sprint(r.got) != "[1 2 3 9]" {
		t.Errorf("delivered %v, want [1 2 3 9] (the recovered batch in its place)", r.got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, err := os.Stat(filepath.Join(dir, ".sync-marks.tmp42")); err != nil {
		t.Errorf("another file's temporary file was taken for a batch: %v", err)
	}
}

// Only numbered batch files are waiting batches: what a person or another
// tool leaves in the directory is not counted.
func TestWaitingCountsOnlyBatches(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	defer s.Close()
	s.Put(batch(1))
	for _, name := range []string{"notes.json", "1.json", "00000000000000000002.json.bak", ".tmpx.json"} {
		os.WriteFile(filepath.Join(dir, name), []byte(`{}`), 0o600)
	}
	if w, err := Waiting(dir); err != nil || len(w) != 1 {
		t.Errorf("waiting %v (%v), want only the one batch", w, err)
	}
}

// openSpool opens the spool in dir with room for 1 MiB of batches.
func openSpool(t *testing.T, dir string) *Spool {
	t.Helper()
	s, err := Open(dir, 1<<20, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Delivered tells when a batch and those before it left the spool,
// whatever came after them; Last names the newest batch put.
func TestDeliveredFollowsTheOldestWaiting(t *testing.T) {
	s := openSpool(t, filepath.Join(t.TempDir(), "spool"))
	if s.Last() != 0 || !s.Delivered(s.Last()) {
		t.Fatalf("an empty spool: Last %d, Delivered %v", s.Last(), s.Delivered(s.Last()))
	}
	for id := api.ID(1); id <= 3; id++ {
		if err := s.Put(batch(id)); err != nil {
			t.Fatal(err)
		}
	}
	first, last := s.Last()-2, s.Last()
	if s.Delivered(first) {
		t.Fatal("Delivered before anything was sent")
	}
	gate := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent := make(chan api.ID)
	go s.Run(ctx, func(_ context.Context, b *api.MessageBatch) error {
		if b.Deletes[0] == 2 {
			<-gate // the second batch is held
		}
		sent <- b.Deletes[0]
		return nil
	})
	<-sent // the first batch went, the second is held
	<-waitUntil(func() bool { return s.Delivered(first) })
	if s.Delivered(first + 1) {
		t.Error("Delivered for a batch still being sent")
	}
	if err := s.Put(batch(4)); err != nil { // a live batch after
		t.Fatal(err)
	}
	close(gate)
	<-sent
	<-sent
	<-sent
	<-waitUntil(func() bool { return s.Delivered(last) })
}

// waitUntil closes its channel once cond holds.
func waitUntil(cond func() bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for !cond() {
			time.Sleep(time.Millisecond)
		}
		close(done)
	}()
	return done
}

// A replay read a rejected batch, and a Forget (the bot's, or searchd
// forget's) rewrote it while the replay sent the old copy: what the
// Forget took out was stored again, and searchd forget's messages, never
// stored, had no tombstone to stop them. The replay holds rejected/'s
// lock from reading a batch to removing it, as Forget does.
func TestReplayHoldsTheRejectedLockWhileItSends(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	s.Put(batch(1))
	bad := &api.Error{Status: 400, Message: "bad", Code: api.CodeBadBatch}
	if !s.setAside(context.Background(), 1, func(context.Context, *api.MessageBatch) error { return bad }, bad, true) {
		t.Fatal("not set aside")
	}
	held := false
	send := func(context.Context, *api.MessageBatch) error {
		f, err := os.Open(filepath.Join(dir, "rejected"))
		if err != nil {
			return err
		}
		defer f.Close()
		held = errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB), syscall.EWOULDBLOCK)
		return nil
	}
	if res, err := ReplayRejected(context.Background(), dir, send); err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("replay: %+v, %v", res, err)
	}
	if !held {
		t.Error("a Forget could rewrite the batch while the replay sent its old copy")
	}
}
