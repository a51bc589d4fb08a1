package bot

import (
	"context"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// A MESSAGE_UPDATE that carries the author but not the content (with or
// without the timestamp) leaves the stored text, type and reply as they
// are; a real edit, even one that empties the text beside a file, still
// replaces it.
func TestPartialUpdateErasesNothing(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	ctx := context.Background()
	at := t0.Add(300 * 24 * time.Hour)
	m := message(general, user(alice, "alice"), at, "the spare key is under the blue pot")
	e.discord.Dispatch("MESSAGE_CREATE", m)
	waitFor(t, "the new message", func() bool { _, err := e.c.Message(ctx, api.ID(m.ID), 0, 0); return err == nil })

	author := map[string]any{"id": m.Author.ID, "username": "alice"}
	e.discord.Dispatch("MESSAGE_UPDATE", map[string]any{"id": m.ID, "channel_id": general, "guild_id": guildID, "author": author})
	e.discord.Dispatch("MESSAGE_UPDATE", map[string]any{"id": m.ID, "channel_id": general, "guild_id": guildID, "author": author,
		"timestamp": m.Timestamp, "edited_timestamp": discord.NewTimestamp(at.Add(time.Minute))})
	// A later edit shows both updates were applied before it.
	other := message(general, user(bob, "bob"), at.Add(time.Second), "first words")
	e.discord.Dispatch("MESSAGE_CREATE", other)
	waitFor(t, "a later message", func() bool { _, err := e.c.Message(ctx, api.ID(other.ID), 0, 0); return err == nil })
	got, err := e.c.Message(ctx, api.ID(m.ID), 0, 0)
	if err != nil || got.Message.Content != m.Content {
		t.Fatalf("after partial updates: %+v, %v; want the text kept", got, err)
	}
	if r, err := e.c.Search(ctx, map[string][]string{"q": {"spare key"}, "mode": {"lexical"}}); err != nil || len(r.Results) == 0 {
		t.Errorf("the text is no longer found after partial updates: %+v, %v", r, err)
	}

	emptied := m
	emptied.Content, emptied.EditedTimestamp = "", discord.NewTimestamp(at.Add(2*time.Minute))
	emptied.Attachments = []discord.Attachment{{ID: 1, Filename: "key.jpg"}}
	e.discord.Dispatch("MESSAGE_UPDATE", emptied)
	waitFor(t, "the text removed by its author", func() bool {
		got, err := e.c.Message(ctx, api.ID(m.ID), 0, 0)
		return err == nil && got.Message.Content == "📎 key.jpg" // the text gone, the file named (api.WithParts)
	})
}

// A partial update waiting beside its message in one flush, before or
// after it, keeps the message's text and takes what it carries.
func TestBatcherCompletesPartialUpdates(t *testing.T) {
	at := func(m int) *time.Time { t := time.Date(2025, 1, 1, 0, m, 0, 0, time.UTC); return &t }
	b := &batcher{maxItems: 100}
	full := api.MessageUpsert{ID: 1, Content: "the key is under the pot", Type: "Reply", ReplyToID: 7, Attachments: 1}
	b.message(full)
	b.message(api.MessageUpsert{ID: 1, Partial: true})
	b.message(api.MessageUpsert{ID: 2, Partial: true, EditedAt: at(3)})
	b.message(api.MessageUpsert{ID: 2, Content: "original", Type: "Default"})
	b.message(api.MessageUpsert{ID: 3, Content: "original", Type: "Default"})
	b.message(api.MessageUpsert{ID: 3, Partial: true, Content: "edited", EditedAt: at(4)})
	got := map[api.ID]api.MessageUpsert{}
	for _, m := range b.pending.Messages {
		got[m.ID] = m
	}
	if m := got[1]; m.Content != full.Content || m.Type != "Reply" || m.ReplyToID != 7 || m.Attachments != 1 || m.Partial {
		t.Errorf("a create then a bare update: %+v", m)
	}
	if m := got[2]; m.Content != "original" || m.EditedAt == nil || m.Partial {
		t.Errorf("a bare edit before its create: %+v", m)
	}
	if m := got[3]; m.Content != "edited" || m.Type != "Default" || m.Partial {
		t.Errorf("a create then a partial edit: %+v", m)
	}
}

// A link preview Discord adds to a live message later (a MESSAGE_UPDATE
// with the embeds alone, no author, no timestamp) joins its stored text
// and is found; one for a message searchd does not have stores nothing.
func TestLinkPreviewUpdateIsStored(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	ctx := context.Background()
	at := t0.Add(300 * 24 * time.Hour)
	m := message(general, user(alice, "alice"), at, "read this before the review https://go.dev/doc/effective_go")
	e.discord.Dispatch("MESSAGE_CREATE", m)
	waitFor(t, "the new message", func() bool { _, err := e.c.Message(ctx, api.ID(m.ID), 0, 0); return err == nil })

	embeds := []map[string]any{{"type": "link", "url": "https://go.dev/doc/effective_go", "title": "Effective Go",
		"description": "Tips for writing clear, idiomatic Go code."}}
	// The unknown one first: once the second is stored, the first was applied.
	unknown := m.ID + 7777
	e.discord.Dispatch("MESSAGE_UPDATE", map[string]any{"id": unknown, "channel_id": general, "guild_id": guildID, "embeds": embeds})
	e.discord.Dispatch("MESSAGE_UPDATE", map[string]any{"id": m.ID, "channel_id": general, "guild_id": guildID, "embeds": embeds})
	want := m.Content + "\n🔗 Effective Go — Tips for writing clear, idiomatic Go code."
	waitFor(t, "the preview joined to the text", func() bool {
		got, err := e.c.Message(ctx, api.ID(m.ID), 0, 0)
		return err == nil && got.Message.Content == want
	})
	if r, err := e.c.Search(ctx, map[string][]string{"q": {"idiomatic"}, "mode": {"lexical"}}); err != nil || len(r.Results) != 1 {
		t.Errorf("the preview is not found: %+v, %v", r, err)
	}
	if _, err := e.c.Message(ctx, api.ID(unknown), 0, 0); err == nil {
		t.Error("a preview of a message searchd does not have was stored")
	}
}
