package bot

import (
	"testing"

	"github.com/diamondburned/arikawa/v3/discord"
)

// A live message stores its file names, stickers and link previews as an
// import of the same message does (api.WithParts); a partial update that
// carries embeds alone adds no lines that would replace the text.
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
	if u := upsert(&unfurl, nil); !u.Partial || u.Content != "" {
		t.Errorf("partial update: %+v", u)
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
