package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dsearch/searchd"
	"dsearch/searchd/internal/sample"
	"dsearch/searchd/segment"
	"dsearch/searchd/sqlite"
	"dsearch/shared/api"
)

// searchd forget left what it forgot in the batches searchd had refused
// from the bot (DATA/bot-spool/rejected/): their text stayed on disk,
// and dsearch-bot --replay-rejected stored them again, as they were never
// stored and left no tombstone. forget takes them out of those files too,
// by the same selection: an author's; a channel's and its threads' (the
// threads the database or the batches place); the older than a time.
func TestForgetTakesItsMessagesOutOfTheBotsRejectedBatches(t *testing.T) {
	general, _ := api.ParseID(sample.GeneralID)
	thread, _ := api.ParseID(sample.ThreadID)
	const author, other, newThread = 910000000000000077, 910000000000000078, 900000000000000099
	at := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	m := func(id, ch, who api.ID, days int, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: ch, Author: api.Author{ID: who, Username: "u"}, CreatedAt: at.AddDate(0, 0, days), Content: text}
	}
	batch := api.MessageBatch{
		Channels: []api.Channel{{ID: newThread, ParentID: general, Name: "t", Kind: "GuildPublicThread"}},
		Messages: []api.MessageUpsert{
			m(1, 900000000000000020, author, 0, "zq-author's words"),
			m(2, 900000000000000020, other, 0, "stays"),
			m(3, thread, other, 0, "zq-in the thread"),
			m(4, newThread, other, 0, "zq-in a thread only the batch places"),
			m(5, 900000000000000020, other, -10, "zq-older"),
		}}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"an author", []string{"--author", "910000000000000077"}},
		{"a channel", []string{"--channel", sample.GeneralID}},
		{"a time", []string{"--before", "2025-05-25"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			data := importSample(t, dir)
			rej := filepath.Join(data, "bot-spool", "rejected")
			os.MkdirAll(rej, 0o700)
			path := filepath.Join(rej, "00000000000000000007.json")
			b, _ := json.Marshal(batch)
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := run(t, append([]string{"forget", "--data", data}, tc.args...)...); err != nil {
				t.Fatalf("forget: %v\n%s", err, out)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var left api.MessageBatch
			if err := json.Unmarshal(got, &left); err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, m := range left.Messages {
				texts = append(texts, m.Content)
			}
			want := map[string][]string{
				"an author": {"stays", "zq-in the thread", "zq-in a thread only the batch places", "zq-older"},
				"a channel": {"zq-author's words", "stays", "zq-older"},
				"a time":    {"zq-author's words", "stays", "zq-in the thread", "zq-in a thread only the batch places"},
			}[tc.name]
			if strings.Join(texts, "|") != strings.Join(want, "|") {
				t.Errorf("the rejected batch holds %q, want %q", texts, want)
			}
		})
	}
}

// forget cleaned the refused batches only after the database forget: a
// dsearch-bot --replay-rejected reading a batch before that (it holds
// rejected/'s lock while it sends) stored the author's refused message
// once the database forget had passed it, with no tombstone to stop it.
// The batches are cleaned before the database forget too.
func TestForgetCleansTheRefusedBatchesBeforeTheDatabase(t *testing.T) {
	defer func() { forgetStep = nil }()
	dir := t.TempDir()
	data := importSample(t, dir)
	rej := filepath.Join(data, "bot-spool", "rejected")
	os.MkdirAll(rej, 0o700)
	path := filepath.Join(rej, "00000000000000000007.json")
	b, _ := json.Marshal(api.MessageBatch{Messages: []api.MessageUpsert{{ID: 1, ChannelID: 900000000000000020,
		Author: api.Author{ID: 910000000000000077, Username: "u"}, CreatedAt: time.Now(), Content: "zq-author's words"}}})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	checked := false
	forgetStep = func(step string) {
		if step != "database" {
			return
		}
		checked = true
		if got, err := os.ReadFile(path); err == nil && strings.Contains(string(got), "zq-author") {
			t.Error("while the database forgot the author, a refused batch still held their message for a replay to store")
		}
	}
	if out, err := run(t, "forget", "--data", data, "--author", "910000000000000077"); err != nil {
		t.Fatalf("forget: %v\n%s", err, out)
	}
	if !checked {
		t.Fatal("forget never reached its database step")
	}
}

// A batch refused while searchd forget runs joins rejected/ after the
// first cleaning; a replay may send it before the second. It cannot store
// what the forget deleted: a refusal is for what the batch holds, so the
// replay is refused again, and were it taken (a searchd fixed meanwhile),
// every message the forget deleted left a tombstone, which skips its
// copy, an edit included (here taken straight into the database at the
// database step, as the replay's post would be). Its messages never
// stored were still waiting when the forget began: messages written
// since, as the spool's waiting batches are.
func TestAReplayAfterTheDatabaseForgetCannotStoreWhatItForgot(t *testing.T) {
	defer func() { forgetStep = nil }()
	dir := t.TempDir()
	data := importSample(t, dir)
	const author = 910000000000000003
	ctx := context.Background()
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(data, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var id, channel int64
	err = raw.QueryRow(`SELECT id, channel_id FROM messages WHERE author_id = ? LIMIT 1`, author).Scan(&id, &channel)
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	forgetStep = func(step string) {
		if step != "database" {
			return
		}
		db, err := sqlite.Open(ctx, data)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		edited := time.Now().UnixMicro()
		res, err := db.Apply(ctx, &searchd.Batch{Messages: []searchd.Message{{ID: id, ChannelID: channel,
			Author: searchd.Author{ID: author, Username: "u"}, CreatedAt: edited - 1e6, EditedAt: edited,
			Content: "zq-an edit refused, then replayed", Type: "Default"}}}, segment.DefaultRules, nil)
		if err != nil || res.Skipped != 1 {
			t.Errorf("the replayed copy of a forgotten message: %+v, %v", res, err)
		}
	}
	if out, err := run(t, "forget", "--data", data, "--author", "910000000000000003"); err != nil {
		t.Fatalf("forget: %v\n%s", err, out)
	}
	db, err := sqlite.Open(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if m, err := db.Message(ctx, id); err == nil {
		t.Errorf("the forgotten message is stored again: %q", m.Content)
	}
}

// A link preview's update (partial) names no author: searchd forget
// --author left the preview of the author's link in the bot's refused
// batches. The author's messages are deleted (tombstones) by then, and a
// refused update of a message deleted goes too.
func TestForgetAuthorTakesTheirLinkPreviewsOutOfTheBotsRejectedBatches(t *testing.T) {
	dir := t.TempDir()
	data := importSample(t, dir)
	const author = 910000000000000003
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(data, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var id, other, channel int64
	err = raw.QueryRow(`SELECT id, channel_id FROM messages WHERE author_id = ? LIMIT 1`, author).Scan(&id, &channel)
	if err == nil {
		err = raw.QueryRow(`SELECT id FROM messages WHERE author_id <> ? LIMIT 1`, author).Scan(&other)
	}
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	rej := filepath.Join(data, "bot-spool", "rejected")
	os.MkdirAll(rej, 0o700)
	path := filepath.Join(rej, "00000000000000000007.json")
	preview := func(id int64, title string) api.MessageUpsert {
		return api.MessageUpsert{ID: api.ID(id), ChannelID: api.ID(channel), Partial: true, CreatedAt: time.Now(), Embeds: []api.Embed{{Title: title}}}
	}
	b, _ := json.Marshal(api.MessageBatch{Messages: []api.MessageUpsert{preview(id, "zq-the author's link"), preview(other, "another's link stays")}})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "forget", "--data", data, "--author", "910000000000000003"); err != nil {
		t.Fatalf("forget: %v\n%s", err, out)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "zq-") || !strings.Contains(string(got), "another's link stays") {
		t.Errorf("after the forget, the refused batch holds %s", got)
	}
}

// searchd forget cleaned the refused batches of the default spool only
// (DATA/bot-spool): a bot run with its spool elsewhere kept what was
// forgotten in its SPOOL/rejected/ (the bot's check asks searchd about
// an author's forget, not a channel's or a time's). --bot-spool names it.
func TestForgetCleansTheBotSpoolItIsTold(t *testing.T) {
	dir := t.TempDir()
	data := importSample(t, dir)
	spool := filepath.Join(dir, "elsewhere")
	rej := filepath.Join(spool, "rejected")
	os.MkdirAll(rej, 0o700)
	path := filepath.Join(rej, "00000000000000000007.json")
	b, _ := json.Marshal(api.MessageBatch{Messages: []api.MessageUpsert{
		{ID: 1, ChannelID: 900000000000000020, Author: api.Author{ID: 910000000000000078, Username: "u"}, CreatedAt: time.Now(), Content: "zq-in the channel forgotten"},
		{ID: 2, ChannelID: 900000000000000021, Author: api.Author{ID: 910000000000000078, Username: "u"}, CreatedAt: time.Now(), Content: "stays"}}})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, "forget", "--data", data, "--bot-spool", spool, "--channel", "900000000000000020"); err != nil {
		t.Fatalf("forget: %v\n%s", err, out)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "zq-") || !strings.Contains(string(got), "stays") {
		t.Errorf("after the forget, the refused batch holds %s", got)
	}
}

// A --bot-spool that is no directory (a typo, the bot's spool on another
// disk not mounted) is refused before anything is forgotten: the forget
// went through and said nothing of the spool, whose refused batches kept
// what it forgot.
func TestForgetRefusesABotSpoolThatIsNotThere(t *testing.T) {
	dir := t.TempDir()
	data := importSample(t, dir)
	before := messageCount(t, data)
	out, err := run(t, "forget", "--data", data, "--bot-spool", filepath.Join(dir, "no-such-spool"), "--channel", "900000000000000020")
	if err == nil || !strings.Contains(out+err.Error(), "bot-spool") {
		t.Fatalf("forget with a --bot-spool not there: %v\n%s", err, out)
	}
	if n := messageCount(t, data); n != before {
		t.Errorf("%d messages after the refused forget, %d before", n, before)
	}
}

func messageCount(t *testing.T, data string) int {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(data, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow(`SELECT COUNT(*) FROM messages`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
