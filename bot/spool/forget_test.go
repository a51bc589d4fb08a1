package spool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

	n, err := ForgetAuthor(dir, member)
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
