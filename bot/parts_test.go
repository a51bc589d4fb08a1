package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
)

// A live message stores its file names, stickers and link previews as an
// import of the same message does (api.WithParts); a partial update that
// carries embeds alone adds no lines that would replace the text, but
// carries the previews for searchd to add; waiting beside its message in
// one flush, it joins the message's text.
func TestUpsertParts(t *testing.T) {
	m := message(general, user(alice, "alice"), t0, "here is the config")
	m.Attachments = []discord.Attachment{{Filename: "tsconfig.json"}}
	m.Stickers = []discord.StickerItem{{Name: "Wave"}}
	m.Embeds = []discord.Embed{{Title: "Effective Go", Description: "Tips for writing clear, idiomatic Go code."}}
	want := "here is the config\n📎 tsconfig.json\n[sticker: Wave]\n🔗 Effective Go — Tips for writing clear, idiomatic Go code."
	if got := upsert(&m, nil).Content; got != want {
		t.Errorf("content %q, want %q", got, want)
	}
	unfurl := discord.Message{ID: m.ID, ChannelID: m.ChannelID, GuildID: m.GuildID, Author: m.Author,
		Embeds: []discord.Embed{{Title: "Effective Go"}}}
	u := upsert(&unfurl, nil)
	if !u.Partial || u.Content != "" || len(u.Embeds) != 1 || u.Embeds[0].Title != "Effective Go" {
		t.Errorf("partial update: %+v", u)
	}
	created := m
	created.Embeds = nil
	b := &batcher{maxItems: 100}
	b.message(upsert(&created, nil))
	b.message(u)
	want = "here is the config\n📎 tsconfig.json\n[sticker: Wave]\n🔗 Effective Go"
	if got := b.pending.Messages; len(got) != 1 || got[0].Content != want || got[0].Partial || got[0].Embeds != nil {
		t.Errorf("the message and its preview in one flush: %+v, want content %q", got, want)
	}
}

// A command's reply is named as DiscordChatExporter names it, which
// searchd reads as something said (segment.IsSystem), not as a notice
// ("Type23").
func TestCommandRepliesKeepTheirNames(t *testing.T) {
	for typ, want := range map[discord.MessageType]string{
		discord.ChatInputCommandMessage: "ChatInputCommand",
		discord.ContextMenuCommand:      "ContextMenuCommand",
	} {
		if got := messageType(typ); got != want {
			t.Errorf("type %d is %q, want %q", typ, got, want)
		}
	}
}

// A forward stores its snapshot's file names, stickers and link previews
// as its text, as an import of the same message does: a forwarded photo
// is found by its name, and is not stored empty.
func TestUpsertForwardParts(t *testing.T) {
	m := message(general, user(alice, "alice"), t0, "")
	m.Reference = &discord.MessageReference{Type: discord.MessageReferenceTypeForward, MessageID: 9, ChannelID: staff}
	m.MessageSnapshots = []discord.MessageSnapshot{{Message: discord.MessageSnapshotMessage{Content: "look at this",
		Attachments: []discord.Attachment{{Filename: "receipt.jpg"}}, Stickers: []discord.StickerItem{{Name: "Wave"}},
		Embeds: []discord.Embed{{Title: "Zebra facts", Description: "all about zebras"}}}}}
	want := "look at this\n📎 receipt.jpg\n[sticker: Wave]\n🔗 Zebra facts — all about zebras"
	if u := upsert(&m, nil); u.Content != want || u.Partial || u.ReplyToID != 0 {
		t.Errorf("forward: partial %v, reply %d, content %q; want %q", u.Partial, u.ReplyToID, u.Content, want)
	}
}

// "Find related conversations" on a forward searches with the forwarded
// text, which is what the member sees: it said the message had no text.
func TestRelatedToAForward(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	target := message(general, user(bob, "bob"), t0.Add(100*24*time.Hour), "")
	target.Reference = &discord.MessageReference{Type: discord.MessageReferenceTypeForward, MessageID: 9, ChannelID: general}
	target.MessageSnapshots = []discord.MessageSnapshot{{Message: discord.MessageSnapshotMessage{Content: "is the boiler fixed yet"}}}
	_, edit, _ := e.interaction(bob, 2, map[string]any{"id": "9002", "name": cmdRelated, "type": 3,
		"target_id": target.ID.String(), "resolved": map[string]any{"messages": map[string]any{target.ID.String(): target}}})
	if text := embedText(edit); !strings.Contains(text, "Related conversations") || !strings.Contains(text, "boiler broke again") {
		t.Errorf("related to a forward: %v", edit)
	}
}
