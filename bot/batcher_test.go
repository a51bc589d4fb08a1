package bot

import (
	"fmt"
	"testing"
	"time"

	"dsearch/shared/api"
)

func TestSplitKeepsOrderAndBound(t *testing.T) {
	b := &api.MessageBatch{Guilds: []api.Guild{{ID: 1}}, Channels: []api.Channel{{ID: 2}, {ID: 3}},
		Messages: []api.MessageUpsert{{ID: 4}, {ID: 5}, {ID: 6}}, Deletes: []api.ID{4}}
	parts := split(b, 3)
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
	if split(&api.MessageBatch{}, 3) != nil {
		t.Error("an empty batch split into something")
	}
}

// An edit that arrives before its message, in one flush, is not undone by
// the message (issue 24.7); of two edits the later stays.
func TestBatcherKeepsTheLatestEdit(t *testing.T) {
	at := func(m int) *time.Time { t := time.Date(2025, 1, 1, 0, m, 0, 0, time.UTC); return &t }
	b := &batcher{maxItems: 100}
	b.message(api.MessageUpsert{ID: 1, Content: "edited", EditedAt: at(2)})
	b.message(api.MessageUpsert{ID: 1, Content: "original"})
	b.message(api.MessageUpsert{ID: 2, Content: "second edit", EditedAt: at(5)})
	b.message(api.MessageUpsert{ID: 2, Content: "first edit", EditedAt: at(3)})
	b.message(api.MessageUpsert{ID: 3, Content: "original"})
	b.message(api.MessageUpsert{ID: 3, Content: "edited", EditedAt: at(1)})
	got := map[api.ID]string{}
	for _, m := range b.pending.Messages {
		got[m.ID] = m.Content
	}
	want := map[api.ID]string{1: "edited", 2: "second edit", 3: "edited"}
	if len(b.pending.Messages) != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pending %v, want %v", got, want)
	}
}
