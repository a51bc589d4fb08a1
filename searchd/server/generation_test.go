package server_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"dsearch/shared/api"
)

// A batch naming another generation than the database served (a restore
// came between the bot's check and its post) is refused with its own
// code and stores nothing; one naming the served generation, or none (an
// import, a replay, an older bot), is stored. So is a backfill checkpoint
// (one read from the database a restore replaced).
func TestPostNamingAnotherGenerationIsRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h, err := f.c.Health(ctx)
	if err != nil || h.Generation == "" {
		t.Fatalf("health: %+v, %v", h, err)
	}
	at := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	msg := func(id api.ID) *api.MessageBatch {
		return &api.MessageBatch{Messages: []api.MessageUpsert{{ID: id, ChannelID: 77, GuildID: 1,
			Author: api.Author{ID: 5, Username: "u"}, CreatedAt: at, Content: "hello"}}}
	}
	_, err = f.c.PostMessagesIn(ctx, "ANOTHERGENERATION", msg(7101))
	var ae *api.Error
	if !api.StaleGeneration(err) || !errors.As(err, &ae) || ae.Status != http.StatusConflict || api.BadBatch(err) {
		t.Fatalf("a batch naming another generation: %v", err)
	}
	if _, err := f.c.Message(ctx, 7101, 0, 0); !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
		t.Errorf("the refused batch was stored: %v", err)
	}
	if r, err := f.c.PostMessagesIn(ctx, h.Generation, msg(7102)); err != nil || r.Inserted != 1 {
		t.Errorf("a batch naming the served generation: %+v, %v", r, err)
	}
	if r, err := f.c.PostMessages(ctx, msg(7103)); err != nil || r.Inserted != 1 {
		t.Errorf("a batch naming none: %+v, %v", r, err)
	}
	cp := &api.Backfill{Channel: 77, Before: 7101}
	if err := f.c.SetBackfillIn(ctx, "ANOTHERGENERATION", cp); !api.StaleGeneration(err) {
		t.Errorf("a checkpoint naming another generation: %v", err)
	}
	if got, err := f.c.Backfill(ctx, 77); err != nil || got.Before != 0 {
		t.Errorf("the refused checkpoint was saved: %+v, %v", got, err)
	}
	if err := f.c.SetBackfillIn(ctx, h.Generation, cp); err != nil {
		t.Errorf("a checkpoint naming the served generation: %v", err)
	}
	if got, err := f.c.Backfill(ctx, 77); err != nil || got.Before != 7101 {
		t.Errorf("the checkpoint naming the served generation: %+v, %v", got, err)
	}
}
