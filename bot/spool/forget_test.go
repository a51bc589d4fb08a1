package spool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dsearch/shared/api"
)

// A member who opts out is taken out of the batches kept in rejected/:
// their text does not wait on disk for a replay. Other members'
// messages and the rest of a batch stay; a batch left empty goes.
func TestForgetAuthorInRejected(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	defer s.Close()
	const member, other = 602, 601
	upsert := func(id, author api.ID, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: 5, Author: api.Author{ID: author, Username: "u"}, Content: text}
	}
	write := func(name string, b api.MessageBatch) string {
		data, _ := json.Marshal(b)
		p := filepath.Join(dir, "rejected", name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mixed := write("00000000000000000001.json", api.MessageBatch{
		Messages: []api.MessageUpsert{upsert(1, member, "member's secret"), upsert(2, other, "other words")},
		Deletes:  []api.ID{7}})
	only := write("00000000000000000002.json", api.MessageBatch{
		Messages: []api.MessageUpsert{upsert(3, member, "member's other secret")}})
	untouched := write("00000000000000000003.json", api.MessageBatch{
		Messages: []api.MessageUpsert{upsert(4, other, "more words")}})
	before, _ := os.ReadFile(untouched)

	n, err := Forget(dir, func(m api.MessageUpsert, _ api.ID) bool { return m.Author.ID == member })
	if err != nil || n != 2 {
		t.Fatalf("forgot %d, %v; want 2", n, err)
	}
	data, err := os.ReadFile(mixed)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "secret") || !strings.Contains(string(data), "other words") || !strings.Contains(string(data), `"deletes":["7"]`) {
		t.Errorf("the mixed batch: %s", data)
	}
	if _, err := os.Stat(only); !os.IsNotExist(err) {
		t.Errorf("a batch of only their messages is kept: %v", err)
	}
	if after, _ := os.ReadFile(untouched); string(after) != string(before) {
		t.Errorf("another batch changed: %s", after)
	}
	if rej, _ := Rejected(dir); len(rej) != 2 {
		t.Errorf("rejected %v, want the two left", rej)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "rejected"))
	if len(entries) != 2 {
		t.Errorf("files in rejected/: %v", entries)
	}
}

// The batches waiting before a removal lose the messages it removes: a
// batch left with nothing stays, empty, and Run drops it without sending
// it; the removal's own batch and those after it are not touched; the
// spool's size follows. An opt-out's cleaning (every batch waiting,
// bot.forgetWaitingAuthors) reads only the batches naming the member.
func TestForgetWaiting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	defer s.Close()
	upsert := func(id, author api.ID, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: 5, Author: api.Author{ID: author, Username: "u"}, Content: text}
	}
	put := func(b *api.MessageBatch) uint64 {
		seq, err := s.PutSeq(b)
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	put(&api.MessageBatch{Messages: []api.MessageUpsert{upsert(1, 601, "deleted secret")}})
	mixed := put(&api.MessageBatch{Messages: []api.MessageUpsert{upsert(2, 601, "stays"), upsert(3, 602, "opted out secret")}})
	removal := put(&api.MessageBatch{Messages: []api.MessageUpsert{upsert(4, 601, "behind, stays")}, Deletes: []api.ID{1}})
	after := put(&api.MessageBatch{Messages: []api.MessageUpsert{upsert(1, 601, "after, stays")}})
	size := s.Size()

	// A batch naming none of the names is not read: no spool-wide decode
	// per removal.
	if n, err := s.ForgetWaiting(removal, []api.ID{99}, func(api.MessageUpsert, api.ID) bool { return true }); err != nil || n != 0 {
		t.Fatalf("names nothing waiting holds, yet forgot %d, %v", n, err)
	}
	n, err := s.ForgetWaiting(removal, []api.ID{1, 4}, func(m api.MessageUpsert, _ api.ID) bool { return m.ID == 1 || m.ID == 4 })
	if err != nil || n != 1 {
		t.Fatalf("forgot %d, %v; want 1", n, err)
	}
	if n, err := s.ForgetWaiting(s.Last()+1, []api.ID{602}, func(m api.MessageUpsert, _ api.ID) bool { return m.Author.ID == 602 }); err != nil || n != 1 {
		t.Fatalf("opt-out forgot %d, %v; want 1", n, err)
	}
	var all string
	for _, seq := range []uint64{1, mixed, removal, after} {
		data, err := os.ReadFile(s.path(seq))
		if err != nil {
			t.Fatalf("batch %d: %v", seq, err)
		}
		all += string(data)
	}
	if strings.Contains(all, "secret") || !strings.Contains(all, `"stays"`) || !strings.Contains(all, "behind, stays") || !strings.Contains(all, "after, stays") {
		t.Errorf("the waiting batches: %s", all)
	}
	if s.Len() != 4 || s.Size() >= size {
		t.Errorf("%d batches of %d bytes, was %d", s.Len(), s.Size(), size)
	}
	var got [][]api.ID
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go s.Run(ctx, func(_ context.Context, b *api.MessageBatch) error {
		var ids []api.ID
		for _, m := range b.Messages {
			ids = append(ids, m.ID)
		}
		got = append(got, ids)
		if len(got) == 3 {
			close(done)
		}
		return nil
	})
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("delivered %v", got)
	}
	time.Sleep(50 * time.Millisecond)
	if want := [][]api.ID{{2}, {4}, {1}}; fmt.Sprint(got) != fmt.Sprint(want) || s.Len() != 0 || s.Size() != 0 {
		t.Errorf("delivered %v (want %v), %d batches of %d bytes left", got, want, s.Len(), s.Size())
	}
}

// A crash while Forget or ForgetWaiting rewrote a batch leaves its
// temporary copy (".NAME.forget"), which holds the batch's other
// messages' text: nothing read it, cleaned it or took it out, so a message
// in it deleted or opted out later stayed on disk for good. Open removes
// such copies, waiting and in rejected/; the batch itself is still there
// (the rename is what the crash lost).
func TestForgetCopyLeftByACrashIsRemovedAtOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	if err := s.Put(batch(1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	copies := []string{
		filepath.Join(dir, "."+fmt.Sprintf("%020d.json", 1)+".forget"),
		filepath.Join(dir, "rejected", "."+fmt.Sprintf("%020d.json", 7)+".forget"),
	}
	for _, p := range copies {
		if err := os.WriteFile(p, []byte(`{"messages":[{"id":"5","text":"zq-left behind"}]}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s = openSpool(t, dir)
	defer s.Close()
	for _, p := range copies {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s, a rewrite's copy a crash left, is still there", p)
		}
	}
	if s.Len() != 1 {
		t.Errorf("%d batches waiting, want the one put", s.Len())
	}
}

// A thread's messages kept in rejected/ ahead of the batch that places it
// (a THREAD_UPDATE) go with its channel: the batches are read again once
// a forgotten channel's thread is learnt. The first pass read them before
// it knew the thread's parent.
func TestForgetTakesAThreadPlacedLaterWithItsChannel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s := openSpool(t, dir)
	defer s.Close()
	const channel, thread = 5, 9
	write := func(name string, b api.MessageBatch) {
		data, _ := json.Marshal(b)
		if err := os.WriteFile(filepath.Join(dir, "rejected", name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("00000000000000000001.json", api.MessageBatch{Messages: []api.MessageUpsert{
		{ID: 1, ChannelID: thread, Author: api.Author{ID: 601, Username: "u"}, Content: "zq-thread secret"}}})
	write("00000000000000000002.json", api.MessageBatch{Channels: []api.Channel{{ID: thread, ParentID: channel, Name: "t", Kind: "GuildPublicThread"}}})
	n, err := Forget(dir, func(m api.MessageUpsert, parent api.ID) bool { return m.ChannelID == channel || parent == channel })
	if err != nil || n != 1 {
		t.Errorf("forgot %d, %v; want the thread's message", n, err)
	}
	if rej, _ := Rejected(dir); len(rej) != 0 {
		t.Errorf("rejected/ holds %v, want nothing", rej)
	}
}
