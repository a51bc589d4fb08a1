package server_test

import (
	"context"
	"testing"
	"time"

	"dsearch/shared/api"
)

// POST /v1/outdated drops a message stored in an older version than an
// edit searchd refused, and only then: one stored as new as the edit, or
// newer, stays. No tombstone: the edit, replayed, is stored.
func TestOutdatedDropsOnlyOlderVersions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	at := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	edited := at.Add(time.Hour)
	m := api.MessageUpsert{ID: 9001, ChannelID: 77, GuildID: 1, Author: api.Author{ID: 5, Username: "u"},
		CreatedAt: at, EditedAt: &edited, Content: "the stored version"}
	if _, err := f.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{m}}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []time.Time{at.Add(time.Minute), edited} {
		res, err := f.c.Outdated(ctx, &api.OutdatedRequest{Messages: []api.Version{{ID: 9001, EditedAt: v}}})
		if err != nil || len(res.Dropped) != 0 {
			t.Errorf("an edit at %v, older than or as old as the stored one: %+v, %v", v, res, err)
		}
	}
	if _, err := f.c.Message(ctx, 9001, 0, 0); err != nil {
		t.Fatalf("the stored version went: %v", err)
	}
	later := edited.Add(time.Hour)
	res, err := f.c.Outdated(ctx, &api.OutdatedRequest{Messages: []api.Version{{ID: 9001, EditedAt: later}, {ID: 9002, EditedAt: later}}})
	if err != nil || len(res.Dropped) != 1 || res.Dropped[0] != 9001 {
		t.Fatalf("a later edit: %+v, %v", res, err)
	}
	if _, err := f.c.Message(ctx, 9001, 0, 0); err == nil {
		t.Error("the older version is still served")
	}
	m.EditedAt, m.Content = &later, "the edit, replayed"
	if r, err := f.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{m}}); err != nil || r.Inserted != 1 {
		t.Errorf("the replayed edit: %+v, %v", r, err)
	}
	if code, _ := f.raw(t, "POST", "/v1/outdated", `{"messages":[{"id":"9001","edited_at":"0001-01-01T00:00:00Z"}]}`); code != 400 {
		t.Errorf("an edit without its time: %d", code)
	}
}
