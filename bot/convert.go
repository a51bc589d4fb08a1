package bot

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// upsert converts a Discord message to what searchd stores. member, when
// known, gives the author's nickname.
func upsert(m *discord.Message, member *discord.Member) api.MessageUpsert {
	u := api.MessageUpsert{
		ID: api.ID(m.ID), GuildID: api.ID(m.GuildID), ChannelID: api.ID(m.ChannelID),
		Author: api.Author{ID: api.ID(m.Author.ID), Username: m.Author.Username,
			GlobalName: m.Author.DisplayName, Bot: m.Author.Bot},
		CreatedAt: m.Timestamp.Time().UTC(), Content: m.Content, Type: messageType(m.Type),
		Attachments: len(m.Attachments), Partial: partial(m),
	}
	if u.CreatedAt.Unix() <= 0 {
		u.CreatedAt = m.ID.Time().UTC() // partial payloads: the snowflake knows
	}
	if u.Partial {
		u.Type = "" // not carried (a type never changes): searchd keeps the stored one
	}
	if member != nil {
		u.Author.Nickname = member.Nick
	}
	if m.EditedTimestamp.IsValid() {
		t := m.EditedTimestamp.Time().UTC()
		u.EditedAt = &t
	}
	if r := m.Reference; r != nil {
		switch {
		case r.Type == discord.MessageReferenceTypeForward && len(m.MessageSnapshots) > 0:
			u.Content = said(m)
		case m.Type == discord.InlinedReplyMessage:
			u.ReplyToID = api.ID(r.MessageID)
		}
	}
	for _, mu := range m.Mentions {
		u.Mentions = append(u.Mentions, api.ID(mu.ID))
	}
	if !u.Partial {
		// File names, stickers and link previews, as an import stores them
		// (api.WithParts).
		u.Content = api.WithParts(u.Content, parts(m))
	} else {
		// Not for a partial update: its empty content means "unchanged",
		// and lines of parts would replace the text. The link previews
		// Discord adds later come this way: searchd adds them to the
		// stored text (api.AddEmbeds).
		u.Embeds = parts(m).Embeds
	}
	// Never from Discord (4,000 characters), but a forward's snapshots add up.
	u.Content, _ = api.Clip(u.Content, api.MaxContentBytes)
	return u
}

// said is a message's text with, for a forward, the forwarded text,
// which lives in its snapshots.
func said(m *discord.Message) string {
	if r := m.Reference; r == nil || r.Type != discord.MessageReferenceTypeForward {
		return m.Content
	}
	lines := []string{m.Content}
	for _, s := range m.MessageSnapshots {
		lines = append(lines, s.Message.Content)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// parts is what a message carries besides its text that search should
// find: attachment file names, sticker names, embed titles and
// descriptions; a forward's too, as an import stores them.
func parts(m *discord.Message) api.Parts {
	var p api.Parts
	files, stickers, embeds := m.Attachments, m.Stickers, m.Embeds
	for _, s := range m.MessageSnapshots {
		files = append(slices.Clip(files), s.Message.Attachments...)
		stickers = append(slices.Clip(stickers), s.Message.Stickers...)
		embeds = append(slices.Clip(embeds), s.Message.Embeds...)
	}
	for _, a := range files {
		p.Files = append(p.Files, a.Filename)
	}
	for _, s := range stickers {
		p.Stickers = append(p.Stickers, s.Name)
	}
	for _, e := range embeds {
		p.Embeds = append(p.Embeds, api.Embed{Title: e.Title, Description: e.Description})
	}
	return p
}

// partial tells a payload that does not carry the whole message, as a
// MESSAGE_UPDATE may be: it lacks the timestamp every full message has,
// or it is a member's message with nothing in it at all (Discord refuses
// to store one: no text, file, embed, sticker, component or forward), so
// its content was left out, not emptied. searchd then keeps what such an
// update does not carry.
func partial(m *discord.Message) bool {
	if !m.Timestamp.IsValid() {
		return true
	}
	spoken := m.Type == discord.DefaultMessage || m.Type == discord.InlinedReplyMessage
	return spoken && m.Content == "" && len(m.Attachments) == 0 && len(m.Embeds) == 0 &&
		len(m.Stickers) == 0 && len(m.Components) == 0 && len(m.MessageSnapshots) == 0
}

// later is what searchd should get for two versions of one message, the
// older first: the newer, completed from the older where it is a partial
// update that does not carry a field (so a partial update waiting beside
// its create, in either order, keeps the create's text).
func later(older, newer api.MessageUpsert) api.MessageUpsert {
	if !newer.Partial {
		return newer
	}
	out := older // partial only if older was: nothing else is missing
	out.Content = cmp.Or(newer.Content, older.Content)
	if out.Author.ID == 0 { // a link preview update names no author
		out.Author = newer.Author
	}
	if newer.Embeds != nil { // Discord sends a message's every preview
		if older.Partial {
			out.Embeds = newer.Embeds
		} else {
			out.Content, _ = api.Clip(api.AddEmbeds(out.Content, newer.Embeds), api.MaxContentBytes)
		}
	}
	out.Type = cmp.Or(newer.Type, older.Type)
	out.ReplyToID = cmp.Or(newer.ReplyToID, older.ReplyToID)
	out.Attachments = cmp.Or(newer.Attachments, older.Attachments)
	if newer.EditedAt != nil {
		out.EditedAt = newer.EditedAt
	}
	if newer.Mentions != nil {
		out.Mentions = newer.Mentions
	}
	return out
}

// messageType names a message type as DiscordChatExporter does, the form
// searchd's segmentation rules read ("Default", "Reply" and a command's
// reply are said; everything else is a system message: segment.IsSystem).
func messageType(t discord.MessageType) string {
	if name, ok := messageTypes[t]; ok {
		return name
	}
	return fmt.Sprintf("Type%d", int(t))
}

var messageTypes = map[discord.MessageType]string{
	discord.DefaultMessage:          "Default",
	discord.InlinedReplyMessage:     "Reply",
	discord.ChannelPinnedMessage:    "ChannelPinnedMessage",
	discord.GuildMemberJoinMessage:  "GuildMemberJoin",
	discord.ThreadCreatedMessage:    "ThreadCreated",
	discord.ChatInputCommandMessage: "ChatInputCommand",
	discord.ContextMenuCommand:      "ContextMenuCommand",
	discord.ThreadStarterMessage:    "ThreadStarterMessage",
}

// channel converts a channel or thread.
func channel(c *discord.Channel) api.Channel {
	return api.Channel{ID: api.ID(c.ID), GuildID: api.ID(c.GuildID), ParentID: api.ID(c.ParentID),
		Name: c.Name, Kind: channelKind(c.Type), Topic: c.Topic}
}

// channelKind names a channel type as DiscordChatExporter does; searchd
// tells threads, and private threads, by these names.
func channelKind(t discord.ChannelType) string {
	if name, ok := channelKinds[t]; ok {
		return name
	}
	return fmt.Sprintf("Type%d", int(t))
}

var channelKinds = map[discord.ChannelType]string{
	discord.GuildText:               "GuildTextChat",
	discord.GuildVoice:              "GuildVoiceChat",
	discord.GuildCategory:           "GuildCategory",
	discord.GuildAnnouncement:       "GuildNews",
	discord.GuildAnnouncementThread: "GuildNewsThread",
	discord.GuildPublicThread:       "GuildPublicThread",
	discord.GuildPrivateThread:      "GuildPrivateThread",
	discord.GuildStageVoice:         "GuildStageVoice",
	discord.GuildForum:              "GuildForum",
	guildMedia:                      "GuildMedia",
}

// guildMedia is a media channel: a forum whose posts lead with an image or
// video. arikawa v3.6.0 does not name the type.
const guildMedia discord.ChannelType = 16

func isThread(t discord.ChannelType) bool {
	return t == discord.GuildPublicThread || t == discord.GuildPrivateThread || t == discord.GuildAnnouncementThread
}

// holdsMessages reports whether a channel type has messages of its own
// (categories, forums and media channels do not: their posts are
// threads).
func holdsMessages(t discord.ChannelType) bool {
	switch t {
	case discord.GuildCategory, discord.GuildForum, guildMedia, discord.GuildDirectory:
		return false
	}
	return true
}

// holdsThreads reports whether a channel type has public threads, which
// Discord lists apart once archived.
func holdsThreads(t discord.ChannelType) bool {
	switch t {
	case discord.GuildText, discord.GuildAnnouncement, discord.GuildForum, guildMedia:
		return true
	}
	return false
}
