package spool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"dsearch/shared/api"
)

// searchdRefusing is a searchd that refuses every batch holding message
// or deletion bad (with err), and records what it took, in order.
type searchdRefusing struct {
	mu   sync.Mutex
	bad  api.ID
	err  error
	all  bool // refuses everything (its disk full, say)
	took []api.ID
}

func (r *searchdRefusing) send(_ context.Context, b *api.MessageBatch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := slices.Clone(b.Deletes)
	for _, m := range b.Messages {
		ids = append(ids, m.ID)
	}
	ids = append(ids, b.ForgetChannels...)
	if r.all || slices.Contains(ids, r.bad) {
		return r.err
	}
	r.took = append(r.took, ids...)
	return nil
}

func (r *searchdRefusing) taken() []api.ID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.took)
}

func (r *searchdRefusing) refuseAll(on bool) {
	r.mu.Lock()
	r.all = on
	r.mu.Unlock()
}

func msgs(ids ...api.ID) []api.MessageUpsert {
	var out []api.MessageUpsert
	for _, id := range ids {
		out = append(out, api.MessageUpsert{ID: id, ChannelID: 5, Content: "text"})
	}
	return out
}

func rejectedBatches(t *testing.T, dir string) []api.MessageBatch {
	t.Helper()
	paths, err := Rejected(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []api.MessageBatch
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var b api.MessageBatch
		if err := json.Unmarshal(data, &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// A batch searchd keeps refusing without calling it bad (a 500 it
// answers every time, say for one message it cannot store) held every
// batch behind it, and every catch-up waiting on them, for as long as it
// lasted. Once searchd takes the batch behind it, the refusal is the
// batch's own: what searchd refuses of it alone goes to rejected/, the
// rest (a deletion among it) to searchd, and the batches behind follow.
func TestBatchSearchdKeepsRefusingIsSetAsideOnceItTakesTheNext(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	s.SetAsideAfter, s.SetAsideAge = 3, time.Nanosecond
	s.Put(&api.MessageBatch{Messages: msgs(1, 2, 3), Deletes: []api.ID{90}})
	s.Put(batch(4))
	s.Put(batch(5))
	r := &searchdRefusing{bad: 2, err: &api.Error{Status: 500, Message: "internal error"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, r.send)
	select {
	case <-waitUntil(func() bool { return s.Len() == 0 }):
	case <-time.After(30 * time.Second):
		t.Fatalf("the batches behind the refused one are still waiting (%d); searchd took %v", s.Len(), r.taken())
	}
	got := r.taken()
	for _, id := range []api.ID{1, 3, 90, 4, 5} {
		if !slices.Contains(got, id) {
			t.Errorf("searchd never got %d (took %v)", id, got)
		}
	}
	// In order: what searchd takes of the refused batch before the
	// batches behind it (searchd skips a message of a server it left
	// until the batch placing it anew, say).
	if i := slices.Index(got, 4); i >= 0 && slices.ContainsFunc(got[i:], func(id api.ID) bool { return id == 1 || id == 3 || id == 90 }) {
		t.Errorf("searchd took a later batch before the refused batch's good part: %v", got)
	}
	rej := rejectedBatches(t, dir)
	if len(rej) != 1 || rej[0].Items() != 1 || len(rej[0].Messages) != 1 || rej[0].Messages[0].ID != 2 {
		t.Errorf("rejected/ holds %+v, want the one message searchd refuses", rej)
	}
}

// A batch searchd refuses whole, its every item alone too, while it takes
// the batch behind it: the refusal is the batch's own, and all of it is
// set aside.
func TestBatchRefusedItemByItemIsSetAsideOnceSearchdTakesTheNext(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	s.SetAsideAfter, s.SetAsideAge = 2, time.Nanosecond
	s.Put(&api.MessageBatch{Messages: msgs(1, 2)})
	s.Put(batch(4))
	bad := &api.Error{Status: 500, Message: "internal error"}
	var mu sync.Mutex
	var took []api.ID
	send := func(_ context.Context, b *api.MessageBatch) error {
		mu.Lock()
		defer mu.Unlock()
		if len(b.Messages) > 0 {
			return bad
		}
		took = append(took, b.Deletes...)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, send)
	select {
	case <-waitUntil(func() bool { return s.Len() == 0 }):
	case <-time.After(30 * time.Second):
		t.Fatalf("still waiting: %d", s.Len())
	}
	if rej := rejectedBatches(t, dir); len(rej) != 1 || len(rej[0].Messages) != 2 {
		t.Errorf("rejected/ holds %+v, want both messages", rej)
	}
}

// A searchd refusing every batch alike (its disk full, a failure of its
// own) sets none aside, however long it lasts: they all go, in order,
// once it takes them again.
func TestSearchdRefusingEverythingSetsNothingAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	s.SetAsideAfter, s.SetAsideAge = 2, time.Nanosecond
	for id := api.ID(1); id <= 3; id++ {
		s.Put(batch(id))
	}
	var mu sync.Mutex
	tries := 0
	r := &searchdRefusing{all: true, err: &api.Error{Status: 500, Message: "disk I/O error"}}
	send := func(ctx context.Context, b *api.MessageBatch) error {
		mu.Lock()
		tries++
		if tries == 8 {
			r.refuseAll(false)
		}
		mu.Unlock()
		return r.send(ctx, b)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, send)
	select {
	case <-waitUntil(func() bool { return s.Len() == 0 }):
	case <-time.After(30 * time.Second):
		t.Fatalf("still waiting: %d", s.Len())
	}
	if got := r.taken(); !slices.Equal(got, []api.ID{1, 2, 3}) {
		t.Errorf("searchd took %v, want [1 2 3]", got)
	}
	if rej := rejectedBatches(t, dir); len(rej) != 0 {
		t.Errorf("set aside while searchd refused everything: %+v", rej)
	}
}

// A batch searchd refuses as bad went to rejected/ whole, and with it
// the deletions, the forgotten channel and the other messages it held:
// a deleted message stayed served until someone ran --replay-rejected,
// and Discord cannot tell a catch-up what it deleted. Only what searchd
// refuses alone goes there now.
func TestBadBatchKeepsOnlyWhatSearchdRefusesAlone(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	s.Put(&api.MessageBatch{Messages: msgs(1, 2, 3, 4, 5), Deletes: []api.ID{90, 91}, ForgetChannels: []api.ID{70}})
	s.Put(batch(6))
	r := &searchdRefusing{bad: 3, err: &api.Error{Status: 400, Message: "messages[2]: content is not valid UTF-8", Code: api.CodeBadBatch}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, r.send)
	select {
	case <-waitUntil(func() bool { return s.Len() == 0 }):
	case <-time.After(30 * time.Second):
		t.Fatalf("still waiting: %d", s.Len())
	}
	got := r.taken()
	for _, id := range []api.ID{1, 2, 4, 5, 90, 91, 70, 6} {
		if !slices.Contains(got, id) {
			t.Errorf("searchd never got %d (took %v)", id, got)
		}
	}
	rej := rejectedBatches(t, dir)
	if len(rej) != 1 || rej[0].Items() != 1 || len(rej[0].Messages) != 1 || rej[0].Messages[0].ID != 3 {
		t.Errorf("rejected/ holds %+v, want message 3 alone", rej)
	}
}

// searchd gone while a refused batch is offered in halves: the batch
// waits as it was, nothing set aside, and goes once searchd is back.
func TestSearchdAwayWhileARefusedBatchIsSplitSetsNothingAside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	s.Put(&api.MessageBatch{Messages: msgs(1, 2, 3, 4)})
	var mu sync.Mutex
	calls := 0
	bad := &api.Error{Status: 400, Message: "bad", Code: api.CodeBadBatch}
	send := func(_ context.Context, b *api.MessageBatch) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		switch {
		case calls == 1:
			return bad // the whole batch, once
		case calls < 5:
			return errors.New("searchd is not reachable: connection refused")
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, send)
	select {
	case <-waitUntil(func() bool { return s.Len() == 0 }):
	case <-time.After(30 * time.Second):
		t.Fatalf("still waiting: %d", s.Len())
	}
	if rej := rejectedBatches(t, dir); len(rej) != 0 {
		t.Errorf("set aside while searchd was away: %+v", rej)
	}
}

// A removal spooled while a refused batch is offered in halves takes its
// message out of the waiting file (ForgetWaiting); what is set aside is
// taken from the file as it is then, so the removed text does not come
// back in rejected/.
func TestSetAsideKeepsWhatForgetWaitingTookOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	s.Put(&api.MessageBatch{Messages: msgs(1, 2, 3, 4)})
	bad := &api.Error{Status: 400, Message: "bad", Code: api.CodeBadBatch}
	var once sync.Once
	send := func(_ context.Context, b *api.MessageBatch) error {
		if !slices.ContainsFunc(b.Messages, func(m api.MessageUpsert) bool { return m.ID == 2 }) {
			return nil
		}
		if len(b.Messages) == 1 { // offered alone: message 2 is deleted on Discord meanwhile
			once.Do(func() {
				seq, err := s.PutSeq(batch(2))
				if err != nil {
					t.Error(err)
				}
				if _, err := s.ForgetWaiting(seq, []api.ID{2}, func(m api.MessageUpsert, _ api.ID) bool { return m.ID == 2 }); err != nil {
					t.Error(err)
				}
			})
		}
		return bad
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, send)
	select {
	case <-waitUntil(func() bool { return s.Len() == 0 }):
	case <-time.After(30 * time.Second):
		t.Fatalf("still waiting: %d", s.Len())
	}
	if rej := rejectedBatches(t, dir); len(rej) != 0 {
		t.Errorf("rejected/ holds a message deleted while its batch was split: %+v", rej)
	}
}

// A batch behind the refused one that a removal emptied (ForgetWaiting)
// is dropped unsent: that is no sign searchd takes anything, and the
// refused batch is not set aside for it.
func TestEmptiedBatchBehindIsNoSignSearchdTakesAnything(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	s.SetAsideAfter, s.SetAsideAge = 2, time.Nanosecond
	s.Put(&api.MessageBatch{Messages: msgs(1)})
	s.Put(&api.MessageBatch{Messages: msgs(2)})
	seq, _ := s.PutSeq(batch(3))
	if _, err := s.ForgetWaiting(seq, []api.ID{2}, func(m api.MessageUpsert, _ api.ID) bool { return m.ID == 2 }); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	sends := 0
	send := func(_ context.Context, b *api.MessageBatch) error {
		mu.Lock()
		defer mu.Unlock()
		sends++
		return &api.Error{Status: 500, Message: "disk I/O error"} // searchd refuses everything
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, send)
	<-waitUntil(func() bool { mu.Lock(); defer mu.Unlock(); return sends >= 6 })
	if rej := rejectedBatches(t, dir); len(rej) != 0 {
		t.Errorf("set aside while searchd refused everything: %+v", rej)
	}
}

// Watch brackets the split of a refused batch: its end comes once the
// refused part is in rejected/, for the bot to take out of it what
// searchd removed meanwhile.
func TestWatchEndsOnceTheRefusedPartIsInRejected(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	var mu sync.Mutex
	started, ended, inRejected := 0, 0, false
	s.Watch = func() func() {
		mu.Lock()
		started++
		mu.Unlock()
		return func() {
			mu.Lock()
			defer mu.Unlock()
			ended++
			rej, _ := Rejected(dir)
			inRejected = len(rej) == 1
		}
	}
	s.Put(&api.MessageBatch{Messages: msgs(1, 2)})
	r := &searchdRefusing{bad: 2, err: &api.Error{Status: 400, Message: "bad", Code: api.CodeBadBatch}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx, r.send)
	select {
	case <-waitUntil(func() bool { mu.Lock(); defer mu.Unlock(); return ended > 0 }):
	case <-waitUntil(func() bool { rej, _ := Rejected(dir); return len(rej) > 0 && s.Len() == 0 }):
		time.Sleep(100 * time.Millisecond) // its end, if it comes, is at hand
	}
	mu.Lock()
	defer mu.Unlock()
	if started != 1 || ended != 1 || !inRejected {
		t.Errorf("watch started %d, ended %d, the refused part in rejected/ at its end: %v", started, ended, inRejected)
	}
}
