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
