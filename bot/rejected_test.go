package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// A batch searchd refused waits in SPOOL/rejected/ for a person and
// --replay-rejected. What Discord removes meanwhile leaves those files
// once searchd took the removal, as an opt-out's messages do: a message
// deleted alone or in bulk, a thread deleted, a channel deleted with its
// threads (those the gateway's state knows, and one only the rejected
// batch places), an older copy of a message edited since, a message and
// a channel deleted while the bot was away (found by a catch-up's page
// and at the start), and a server the bot was removed from. A file left
// with nothing goes.
func TestDeletedTextLeavesTheRejectedSpool(t *testing.T) {
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	const plans, plansThread, placedThread = 2100, 2101, 2102
	e.discord.CreateChannel(discord.Channel{ID: plans, Type: discord.GuildText, Name: "plans", ParentID: category})
	e.discord.CreateChannel(discord.Channel{ID: plansThread, Type: discord.GuildPublicThread, Name: "plans thread", ParentID: plans})

	at := h[0].Timestamp.Time()
	msg := func(id api.ID, ch discord.ChannelID, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: api.ID(ch), GuildID: guildID,
			Author: api.Author{ID: alice, Username: "alice"}, Content: text, CreatedAt: at}
	}
	write := func(seq int, b api.MessageBatch) string {
		data, _ := json.Marshal(b)
		p := filepath.Join(e.cfg.SpoolDir, "rejected", fmt.Sprintf("%020d.json", seq))
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	alone := write(97, api.MessageBatch{Messages: []api.MessageUpsert{msg(990, general, "deleted alone on discord")}})
	awayID := api.ID(h[255].ID) // stored, and deleted on Discord while the bot is away
	kept := write(98, api.MessageBatch{
		Channels: []api.Channel{{ID: placedThread, GuildID: guildID, ParentID: plans, Name: "a thread only rejected places", Kind: "GuildPublicThread"}},
		Messages: []api.MessageUpsert{
			msg(991, general, "deleted in bulk on discord"),
			msg(993, thread, "in a thread deleted on discord"),
			msg(994, plans, "in a channel deleted on discord"),
			msg(995, plansThread, "in the deleted channel's thread"),
			msg(996, placedThread, "in a thread only the batch places"),
			msg(997, general, "before its edit"),
			msg(awayID, general, "deleted while the bot was away"),
			msg(998, staff, "in a channel deleted while the bot was away"),
			msg(999, general, "in the server the bot was removed from"),
		}})
	read := func() string {
		data, err := os.ReadFile(kept)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(data)
	}
	// gone waits for the texts to leave the rejected batch, and checks
	// that the later steps' texts are still there.
	steps := [][]string{
		{"deleted in bulk on discord"},
		{"in a thread deleted on discord"},
		{"in a channel deleted on discord", "in the deleted channel's thread", "in a thread only the batch places", "a thread only rejected places"},
		{"before its edit"},
		{"deleted while the bot was away", "in a channel deleted while the bot was away"},
		{"in the server the bot was removed from"},
	}
	step := 0
	gone := func(what string) {
		t.Helper()
		waitFor(t, what, func() bool {
			data := read()
			for _, text := range steps[step] {
				if strings.Contains(data, text) {
					return false
				}
			}
			return true
		})
		data := read()
		for _, later := range steps[step+1:] {
			for _, text := range later {
				if !strings.Contains(data, text) {
					t.Fatalf("%s took out %q too: %s", what, text, data)
				}
			}
		}
		step++
	}

	e.discord.Dispatch("MESSAGE_DELETE", map[string]any{"id": "990", "channel_id": general, "guild_id": guildID})
	waitFor(t, "the batch left empty removed", func() bool { _, err := os.Stat(alone); return os.IsNotExist(err) })
	e.discord.Dispatch("MESSAGE_DELETE_BULK", map[string]any{"ids": []string{"991", "992"}, "channel_id": general, "guild_id": guildID})
	gone("the bulk deletion")
	e.discord.DeleteChannel(thread)
	gone("the thread's deletion")
	e.discord.DeleteChannel(plans)
	gone("the channel's deletion")
	edited := message(general, user(alice, "alice"), at, "after its edit")
	edited.ID, edited.EditedTimestamp = 997, discord.NewTimestamp(at.Add(time.Hour))
	e.discord.Dispatch("MESSAGE_UPDATE", edited)
	gone("the edit")

	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	e.discord.Remove(general, h[255].ID)
	e.discord.DeleteChannel(staff)
	e.start()
	gone("the deletions made while the bot was away")

	e.discord.RemoveBot()
	waitFor(t, "the batch left empty removed", func() bool { _, err := os.Stat(kept); return os.IsNotExist(err) })
}

// A channel deleted on Discord takes its archived threads' messages out
// of SPOOL/rejected/ too. The gateway's state lists active threads only,
// and a rejected batch need not place the thread; searchd, which knows
// the thread's parent, says which threads it forgot with the channel
// (api.BatchResult.ForgotChannels).
func TestArchivedThreadLeavesRejectedWithItsChannel(t *testing.T) {
	e := setup(t)
	h := history()
	e.backfilled(int64(len(h)))
	const plans, archived = 2100, 2103
	e.discord.CreateChannel(discord.Channel{ID: plans, Type: discord.GuildText, Name: "plans", ParentID: category})
	// Archived before: listed by REST, never in the gateway's state.
	e.discord.AddArchived(discord.Channel{ID: archived, Type: discord.GuildPublicThread, Name: "old plans", ParentID: plans,
		ThreadMetadata: &discord.ThreadMetadata{Archived: true, ArchiveTimestamp: discord.NewTimestamp(t0.Add(time.Hour))}})

	at := h[0].Timestamp.Time()
	msg := func(id api.ID, ch discord.ChannelID, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: api.ID(ch), GuildID: guildID,
			Author: api.Author{ID: alice, Username: "alice"}, Content: text, CreatedAt: at}
	}
	// The thread was placed in searchd while it was active (its
	// THREAD_CREATE, before a restart emptied the state of it)...
	if _, err := e.c.PostMessages(context.Background(), &api.MessageBatch{Channels: []api.Channel{
		{ID: archived, GuildID: guildID, ParentID: plans, Name: "old plans", Kind: "GuildPublicThread"}}}); err != nil {
		t.Fatal(err)
	}
	// ... and a live batch of its messages was refused by searchd.
	data, _ := json.Marshal(api.MessageBatch{Messages: []api.MessageUpsert{
		msg(994, plans, "in a channel deleted on discord"),
		msg(995, archived, "in the deleted channel's archived thread"),
	}})
	kept := filepath.Join(e.cfg.SpoolDir, "rejected", fmt.Sprintf("%020d.json", 98))
	if err := os.WriteFile(kept, data, 0o600); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		data, err := os.ReadFile(kept)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(data)
	}
	e.discord.DeleteChannel(plans)
	waitFor(t, "the channel's own message taken out", func() bool { return !strings.Contains(read(), "in a channel deleted on discord") })
	time.Sleep(500 * time.Millisecond)
	if data := read(); strings.Contains(data, "in the deleted channel's archived thread") {
		t.Fatalf("the deleted channel's archived thread's text stays in SPOOL/rejected/: %s", data)
	}
}

// A member opted out through searchd's socket (curl, a script), with the
// bot's spool elsewhere than searchd's default (DATA/bot-spool, which
// searchd cleans itself): the bot never heard of it, and their messages
// in the batches searchd had refused stayed in its SPOOL/rejected/ for
// good. The bot asks searchd, with its answer check, whether the authors
// those batches hold opted out, and takes them out.
func TestOptOutThroughSearchdLeavesTheBotsRejectedSpool(t *testing.T) {
	e := setup(t, checkedOften)
	h := history()
	e.backfilled(int64(len(h)))
	at := h[0].Timestamp.Time()
	msg := func(id api.ID, who discord.UserID, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: api.ID(general), GuildID: guildID,
			Author: api.Author{ID: api.ID(who), Username: "u"}, Content: text, CreatedAt: at}
	}
	data, _ := json.Marshal(api.MessageBatch{Messages: []api.MessageUpsert{
		msg(990, alice, "zq-alice's refused words"), msg(991, bob, "bob's refused words")}})
	p := filepath.Join(e.cfg.SpoolDir, "rejected", fmt.Sprintf("%020d.json", 97))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.OptOut(context.Background(), api.ID(alice)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alice's message to leave the rejected batch", func() bool {
		got, err := os.ReadFile(p)
		return err == nil && !strings.Contains(string(got), "zq-")
	})
	if got, _ := os.ReadFile(p); !strings.Contains(string(got), "bob's refused words") {
		t.Errorf("the rejected batch lost another member's message: %s", got)
	}
}

// What another client removed through searchd's socket, with the bot's
// spool elsewhere than searchd's default (DATA/bot-spool, which searchd
// cleans itself): the bot never heard of it, and the text stayed in its
// SPOOL/rejected/ for good: a message deleted and a channel forgotten by
// a batch posted with curl, a message edited since by one, the messages
// of an author searchd forget --author forgot, and a link preview's
// update (naming no author) of a member who opted out. The bot asks
// searchd, with its answer check, what of those batches it removed.
func TestRemovalsThroughSearchdLeaveTheBotsRejectedSpool(t *testing.T) {
	e := setup(t, checkedOften)
	h := history()
	e.backfilled(int64(len(h)))
	at := h[0].Timestamp.Time()
	const carol, forgotten = 603, 3100
	msg := func(id api.ID, ch api.ID, who api.ID, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: ch, GuildID: guildID,
			Author: api.Author{ID: who, Username: "u"}, Content: text, CreatedAt: at}
	}
	aliceWords := historyMessage(t, "call the landlord about the boiler")
	preview := api.MessageUpsert{ID: api.ID(aliceWords.ID), ChannelID: api.ID(general), GuildID: guildID, Partial: true,
		CreatedAt: aliceWords.Timestamp.Time(), Embeds: []api.Embed{{Title: "zq-the preview of alice's link"}}}
	data, _ := json.Marshal(api.MessageBatch{Messages: []api.MessageUpsert{
		msg(990, api.ID(general), carol, "zq-deleted by another client"),
		msg(991, forgotten, carol, "zq-in a channel another client forgot"),
		msg(992, api.ID(general), bob, "zq-bob's words, forgotten"),
		msg(993, api.ID(general), carol, "zq-before another client's edit"),
		preview,
		msg(994, api.ID(general), carol, "carol's refused words"),
	}})
	p := filepath.Join(e.cfg.SpoolDir, "rejected", fmt.Sprintf("%020d.json", 97))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	edited := at.Add(time.Hour)
	edit := msg(993, api.ID(general), carol, "after the edit")
	edit.EditedAt = &edited
	ctx := context.Background()
	if _, err := e.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{edit},
		Deletes: []api.ID{990}, ForgetChannels: []api.ID{forgotten}}); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(e.sd.bin, "forget", "--data", e.sd.data, "--author", api.ID(bob).String()).CombinedOutput(); err != nil {
		t.Fatalf("searchd forget --author: %v: %s", err, out)
	}
	if _, err := e.c.OptOut(ctx, api.ID(alice)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removed text to leave the rejected batch", func() bool {
		got, err := os.ReadFile(p)
		return err == nil && !strings.Contains(string(got), "zq-")
	})
	if got, _ := os.ReadFile(p); !strings.Contains(string(got), "carol's refused words") {
		t.Errorf("the rejected batch lost what nobody removed: %s", got)
	}
}

// A link preview's update (partial) names no author: a member's /optout
// took their messages out of SPOOL/rejected/ but left the preview of
// their link there. The bot asks searchd at once (not at the next
// periodic check) whether its message is deleted now.
func TestOptOutTakesTheMembersLinkPreviewOutOfTheRejectedSpool(t *testing.T) {
	e := setup(t, func(c *Config) { c.AnswerCheckEvery = time.Hour })
	e.backfilled(int64(len(history())))
	words := historyMessage(t, "call the landlord about the boiler") // alice's
	data, _ := json.Marshal(api.MessageBatch{Messages: []api.MessageUpsert{
		{ID: api.ID(words.ID), ChannelID: api.ID(general), GuildID: guildID, Partial: true,
			CreatedAt: words.Timestamp.Time(), Embeds: []api.Embed{{Title: "zq-the preview of alice's link"}}},
		{ID: 996, ChannelID: api.ID(general), GuildID: guildID, Author: api.Author{ID: bob, Username: "bob"},
			CreatedAt: words.Timestamp.Time(), Content: "bob's refused words"},
	}})
	p := filepath.Join(e.cfg.SpoolDir, "rejected", fmt.Sprintf("%020d.json", 97))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.bot.optOut(context.Background(), alice, optOutConfirm, 0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the preview to leave the rejected batch", func() bool {
		got, err := os.ReadFile(p)
		return err == nil && !strings.Contains(string(got), "zq-")
	})
	if got, _ := os.ReadFile(p); !strings.Contains(string(got), "bob's refused words") {
		t.Errorf("the rejected batch lost what nobody removed: %s", got)
	}
}

// olderSearchd is a searchd older than the bot: it knows neither POST
// /v1/gone's deleted and forgotten (its strict decoder refuses them) nor
// POST /v1/outdated.
type olderSearchd struct{ Searchd }

func (o olderSearchd) Gone(ctx context.Context, q *api.GoneRequest) (*api.Gone, error) {
	if len(q.Deleted)+len(q.Forgotten) > 0 {
		return nil, &api.Error{Status: 400, Message: `invalid JSON body: json: unknown field "deleted"`}
	}
	return o.Searchd.Gone(ctx, q)
}

func (o olderSearchd) Outdated(context.Context, *api.OutdatedRequest) (*api.Outdated, error) {
	return nil, &api.Error{Status: 404, Message: "no route POST /v1/outdated"}
}

// A bot upgraded before its searchd (a searchd older than the bot is a
// state the bot lives with: troubleshooting.md) still takes out of
// SPOOL/rejected/ the messages of a member who opted out through
// searchd's socket, as it did before it asked searchd about deletions
// too: what the older searchd can answer (the opt-outs) is not lost with
// what it cannot.
func TestOptOutThroughAnOlderSearchdLeavesTheBotsRejectedSpool(t *testing.T) {
	e := setup(t, checkedOften)
	h := history()
	e.backfilled(int64(len(h)))
	e.restartHolding(0, func(b *Bot) { b.searchd = olderSearchd{b.searchd} })
	at := h[0].Timestamp.Time()
	msg := func(id api.ID, who discord.UserID, text string) api.MessageUpsert {
		return api.MessageUpsert{ID: id, ChannelID: api.ID(general), GuildID: guildID,
			Author: api.Author{ID: api.ID(who), Username: "u"}, Content: text, CreatedAt: at}
	}
	data, _ := json.Marshal(api.MessageBatch{Messages: []api.MessageUpsert{
		msg(990, alice, "zq-alice's refused words"), msg(991, bob, "bob's refused words")}})
	p := filepath.Join(e.cfg.SpoolDir, "rejected", fmt.Sprintf("%020d.json", 97))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.OptOut(context.Background(), api.ID(alice)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alice's message to leave the rejected batch", func() bool {
		got, err := os.ReadFile(p)
		return err == nil && !strings.Contains(string(got), "zq-")
	})
	if got, _ := os.ReadFile(p); !strings.Contains(string(got), "bob's refused words") {
		t.Errorf("the rejected batch lost another member's message: %s", got)
	}
}
