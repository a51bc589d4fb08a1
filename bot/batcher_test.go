package bot

import (
	"testing"

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
