package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dsearch/shared/api"
	"dsearch/shared/client"
)

// An opt-out sent to searchd's socket by another client than the bot (curl,
// a script: docs/api.md) forgot the member's messages in the database but
// left those in the batches searchd had refused from the bot
// (DATA/bot-spool/rejected/), on disk until a person looked: only the
// bot's own /optout cleaned them. searchd cleans them itself, as searchd
// forget --author does, whoever asked.
func TestOptOutFromAnyClientTakesTheMemberOutOfTheBotsRejectedBatches(t *testing.T) {
	dir := shortTemp(t)
	data := importSample(t, dir)
	rej := filepath.Join(data, "bot-spool", "rejected")
	if err := os.MkdirAll(rej, 0o700); err != nil {
		t.Fatal(err)
	}
	const member, other = 910000000000000077, 910000000000000078
	at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	m := func(id, who api.ID, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: 900000000000000020, Author: api.Author{ID: who, Username: "u"}, CreatedAt: at, Content: text}
	}
	path := filepath.Join(rej, "00000000000000000007.json")
	only := filepath.Join(rej, "00000000000000000008.json")
	for p, b := range map[string]api.MessageBatch{
		path: {Messages: []api.MessageUpsert{m(1, member, "zq-the member's words"), m(2, other, "stays")}},
		only: {Messages: []api.MessageUpsert{m(3, member, "zq-the member's other words")}},
	} {
		data, _ := json.Marshal(b)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(dir, "run", "s.sock")
	startServe(t, sock, "--data", data)
	if _, err := client.New(sock).OptOut(context.Background(), member); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "zq-") || !strings.Contains(string(got), "stays") {
		t.Errorf("after the opt-out, the refused batch holds %s", got)
	}
	if _, err := os.Stat(only); err == nil {
		t.Error("a refused batch holding only the member's message is still there")
	}
}

// A link preview's update (partial) names no author: an opt-out sent to
// searchd left it in the bot's refused batches, the preview of the
// member's link on disk. searchd's opt-out deleted the member's message
// (a tombstone), and a refused update of a message deleted goes too.
func TestOptOutTakesTheMembersLinkPreviewsOutOfTheBotsRejectedBatches(t *testing.T) {
	dir := shortTemp(t)
	data := importSample(t, dir)
	rej := filepath.Join(data, "bot-spool", "rejected")
	if err := os.MkdirAll(rej, 0o700); err != nil {
		t.Fatal(err)
	}
	const member, other = 910000000000000077, 910000000000000078
	at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	m := func(id, who api.ID, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: 900000000000000020, Author: api.Author{ID: who, Username: "u"}, CreatedAt: at, Content: text}
	}
	preview := func(id api.ID, title string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: 900000000000000020, Partial: true, CreatedAt: at, Embeds: []api.Embed{{Title: title}}}
	}
	path := filepath.Join(rej, "00000000000000000007.json")
	b, _ := json.Marshal(api.MessageBatch{Messages: []api.MessageUpsert{preview(1, "zq-the member's link"), preview(2, "another's link stays")}})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "run", "s.sock")
	startServe(t, sock, "--data", data)
	c := client.New(sock)
	ctx := context.Background()
	if _, err := c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{m(1, member, "a link"), m(2, other, "a link")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.OptOut(ctx, member); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "zq-") || !strings.Contains(string(got), "another's link stays") {
		t.Errorf("after the opt-out, the refused batch holds %s", got)
	}
}
