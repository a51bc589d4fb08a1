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
	"dsearch/shared/spoolforget"
)

// A deletion, a deleted channel or an edit POSTed to searchd's socket by
// another client than the bot (curl, a script, a second bot process)
// removed the text from the database but left it in the batches searchd
// had refused from the bot (DATA/bot-spool/rejected/): the bot cleans
// those only for what it sends itself. searchd cleans them too, in the
// request when rejected/'s lock is free, and after it when not: the
// bot's replay holds that lock while it posts a batch, and waiting for
// it inside the request would wait for ever on the replay waiting for
// the response.
func TestRemovalFromAnyClientTakesItsTextOutOfTheBotsRejectedBatches(t *testing.T) {
	const deleted, gone, thread, kept = 900000000000000031, 900000000000000032, 900000000000000033, 900000000000000034
	at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	m := func(id, ch api.ID, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: ch, GuildID: 900000000000000001, Author: api.Author{ID: 910000000000000077, Username: "u"}, CreatedAt: at, Content: text}
	}
	for _, held := range []bool{false, true} {
		name := map[bool]string{false: "lock free", true: "a replay holds the lock"}[held]
		t.Run(name, func(t *testing.T) {
			dir := shortTemp(t)
			data := importSample(t, dir)
			spool := filepath.Join(data, "bot-spool")
			rej := filepath.Join(spool, "rejected")
			if err := os.MkdirAll(rej, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(rej, "00000000000000000007.json")
			b, _ := json.Marshal(api.MessageBatch{
				Channels: []api.Channel{{ID: thread, ParentID: gone, Name: "zq-thread name", Kind: "GuildPublicThread"}},
				Messages: []api.MessageUpsert{
					m(1, kept, "zq-deleted words"), m(2, gone, "zq-in the deleted channel"),
					m(3, thread, "zq-in its thread"), m(4, kept, "zq-before the edit"), m(5, kept, "stays"),
				}})
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(dir, "run", "s.sock")
			d := startServe(t, sock, "--data", data)
			var lock *os.File
			if held {
				var err error
				if lock, err = spoolforget.LockRejected(spool); err != nil {
					t.Fatal(err)
				}
			}
			edited := at.Add(time.Hour)
			edit := m(4, kept, "after the edit")
			edit.EditedAt = &edited
			// Answered while the lock is held (no deadlock): -timeout fails it otherwise.
			if _, err := client.New(sock).PostMessages(context.Background(), &api.MessageBatch{
				Messages: []api.MessageUpsert{edit}, Deletes: []api.ID{1}, ForgetChannels: []api.ID{gone}}); err != nil {
				t.Fatal(err)
			}
			if held {
				lock.Close()                     // the replay is done
				if err := d.stop(); err != nil { // serve finishes the cleaning before it returns
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(got), "zq-") || !strings.Contains(string(got), "stays") {
				t.Errorf("after the removals, the refused batch holds %s", got)
			}
		})
	}
}
