package server_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"dsearch/shared/api"
)

// /v1/optouts/{user}: opting out forgets a member's messages and names and
// skips what of theirs comes later; opting back in lets new messages in.
func TestOptOutRoutes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	at := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	const member = 5
	post := func(id api.ID, author api.ID, text string) *api.BatchResult {
		t.Helper()
		r, err := f.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{{ID: id, ChannelID: 77, GuildID: 1,
			Author: api.Author{ID: author, Username: "user" + author.String(), Nickname: "zanzibar" + author.String()}, CreatedAt: at.Add(time.Duration(id) * time.Second), Content: text}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	post(7001, member, "xylophone lessons on tuesday")
	post(7002, 6, "xylophone lessons are loud")
	if s, err := f.c.OptOutStatus(ctx, member); err != nil || s.OptedOut {
		t.Fatalf("status before: %+v, %v", s, err)
	}
	out, err := f.c.OptOut(ctx, member)
	if err != nil || !out.OptedOut || out.Forgotten != 1 {
		t.Fatalf("opt out: %+v, %v", out, err)
	}
	if _, err := f.c.Message(ctx, 7001, 0, 0); err == nil {
		t.Error("their message is still served")
	}
	found, err := f.c.Search(ctx, url.Values{"q": {"xylophone"}, "mode": {"lexical"}})
	if err != nil || len(found.Results) != 1 || found.Results[0].MessageID != 7002 {
		t.Errorf("search after opting out: %+v, %v", found, err)
	}
	// Their old message again (a backfill) and a new one: skipped.
	if r := post(7001, member, "xylophone lessons on tuesday"); r.Skipped != 1 || r.Inserted != 0 {
		t.Errorf("their old message again: %+v", r)
	}
	if r := post(7003, member, "xylophone again"); r.Skipped != 1 {
		t.Errorf("a new message of theirs: %+v", r)
	}
	// Nobody can name them any more.
	if _, body := f.raw(t, "GET", "/v1/aliases", ""); strings.Contains(body, "zanzibar5") || strings.Contains(body, "user5") {
		t.Errorf("their name is still known: %s", body)
	}
	if s, err := f.c.OptOutStatus(ctx, member); err != nil || !s.OptedOut {
		t.Errorf("status after: %+v, %v", s, err)
	}
	// The way back.
	if in, err := f.c.OptIn(ctx, member); err != nil || in.OptedOut {
		t.Fatalf("opt in: %+v, %v", in, err)
	}
	if r := post(7004, member, "xylophone recital"); r.Inserted != 1 {
		t.Errorf("a new message after opting in: %+v", r)
	}
	if code, _ := f.raw(t, "PUT", "/v1/optouts/nobody", ""); code != 400 {
		t.Errorf("PUT /v1/optouts/nobody: %d", code)
	}
}
