package spool

import (
	"encoding/json"
	"strings"
	"testing"

	"dsearch/shared/api"
)

func TestSplitKeepsOrderAndBound(t *testing.T) {
	b := &api.MessageBatch{Guilds: []api.Guild{{ID: 1}}, Channels: []api.Channel{{ID: 2}, {ID: 3}},
		Messages: []api.MessageUpsert{{ID: 4}, {ID: 5}, {ID: 6}}, Deletes: []api.ID{4}}
	parts := Split(b, 3)
	if len(parts) != 3 {
		t.Fatalf("%d parts, want 3", len(parts))
	}
	var order []api.ID
	for _, p := range parts {
		n := len(p.Guilds) + len(p.Channels) + len(p.Messages) + len(p.Deletes)
		if n == 0 || n > 3 {
			t.Errorf("a part of %d items", n)
		}
		for _, g := range p.Guilds {
			order = append(order, g.ID)
		}
		for _, c := range p.Channels {
			order = append(order, c.ID)
		}
		for _, m := range p.Messages {
			order = append(order, m.ID)
		}
		order = append(order, p.Deletes...)
	}
	want := []api.ID{1, 2, 3, 4, 5, 6, 4}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v (the deletion after its message)", order, want)
		}
	}
	if Split(&api.MessageBatch{}, 3) != nil {
		t.Error("an empty batch split into something")
	}
}

// A thousand long messages would pass searchd's body limit, and a batch
// over it is refused whole, with its deletions: parts stay under
// maxBatchBytes of messages, in order.
func TestSplitKeepsBatchesUnderTheBodyLimit(t *testing.T) {
	long := strings.Repeat("<가>", 1500) // escaped and multi-byte: the JSON is far longer than the text
	b := &api.MessageBatch{Deletes: []api.ID{1}}
	for i := range 1000 {
		b.Messages = append(b.Messages, api.MessageUpsert{ID: api.ID(i + 10), Content: long})
	}
	parts := Split(b, api.MaxBatchItems)
	if len(parts) < 2 {
		t.Fatalf("%d part(s)", len(parts))
	}
	next := api.ID(10)
	for i, p := range parts {
		j, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(j) > 8<<20 {
			t.Errorf("part %d is %d bytes, over searchd's 8 MiB", i, len(j))
		}
		for _, m := range p.Messages {
			if m.ID != next {
				t.Fatalf("part %d: message %d, want %d", i, m.ID, next)
			}
			next++
		}
	}
	if last := parts[len(parts)-1]; len(last.Deletes) != 1 {
		t.Errorf("the deletion is not after the messages: %+v", last.Deletes)
	}
}
