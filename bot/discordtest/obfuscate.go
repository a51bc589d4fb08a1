// Channels the bot may not view, as Discord shows them since 2026-10-12
// (discord-api-docs, "Obfuscated Channels"): the gateway still sends them
// (GUILD_CREATE's list, CHANNEL_CREATE, CHANNEL_UPDATE) as a stand-in, and
// Get Guild Channels omits them; when the bot may view one again, a
// CHANNEL_UPDATE brings the real channel (and its category's, if that was
// hidden too).

package discordtest

import (
	"slices"

	"github.com/diamondburned/arikawa/v3/discord"
)

// ChannelObfuscated is the flag of a stand-in (CHANNEL_OBFUSCATED).
const ChannelObfuscated discord.ChannelFlags = 1 << 17

// HiddenName is a stand-in's name.
const HiddenName = "___hidden___"

// botViewsLocked: the bot may view channel ch (a thread: its parent). A
// category is viewable if the bot may view it or any of its channels
// ("Channel categories are viewable if any of their children channels are
// viewable"). d.mu is held.
func (d *Discord) botViewsLocked(ch discord.Channel) bool {
	if d.botPermissionsLocked(ch.ID).Has(discord.PermissionViewChannel) {
		return true
	}
	if ch.Type != discord.GuildCategory {
		return false
	}
	return slices.ContainsFunc(d.guild.Channels, func(c discord.Channel) bool {
		return c.ParentID == ch.ID && !isThread(c.Type) && d.botPermissionsLocked(c.ID).Has(discord.PermissionViewChannel)
	})
}

// wireLocked is channel ch as the gateway sends it to the bot: itself, or
// its stand-in if the bot may not view it. Only ID, type, position and
// parent are kept; the name is HiddenName, the overwrites one denying
// @everyone View Channel, the rest zero. d.mu is held.
func (d *Discord) wireLocked(ch discord.Channel) discord.Channel {
	ch.GuildID = d.guild.Guild.ID
	if isThread(ch.Type) || d.botViewsLocked(ch) {
		return ch
	}
	return discord.Channel{ID: ch.ID, GuildID: ch.GuildID, Type: ch.Type, Position: ch.Position, ParentID: ch.ParentID,
		Name: HiddenName, Flags: ChannelObfuscated,
		Overwrites: []discord.Overwrite{{ID: discord.Snowflake(d.guild.Guild.ID), Type: discord.OverwriteRole, Deny: discord.PermissionViewChannel}}}
}

// viewsLocked is which of the guild's channels (threads aside) the bot
// may view now. d.mu is held.
func (d *Discord) viewsLocked() map[discord.ChannelID]bool {
	views := map[discord.ChannelID]bool{}
	for _, c := range d.guild.Channels {
		if !isThread(c.Type) {
			views[c.ID] = d.botViewsLocked(c)
		}
	}
	return views
}

// viewChangedLocked sends what Discord sends once a change (to a channel's
// overwrites, a role, the bot's roles) made the bot gain or lose view of
// channels, given what it viewed before: a CHANNEL_UPDATE of each, real
// or stand-in, categories first; and for a channel it views again,
// THREAD_LIST_SYNC with its active threads ("Sent when gaining access to
// a channel"). d.mu is held.
func (d *Discord) viewChangedLocked(before map[discord.ChannelID]bool) {
	if d.intents&intentGuilds == 0 {
		return
	}
	var changed []discord.Channel
	for _, c := range d.guild.Channels {
		if was, ok := before[c.ID]; ok && !isThread(c.Type) && was != d.botViewsLocked(c) {
			changed = append(changed, c)
		}
	}
	slices.SortStableFunc(changed, func(a, b discord.Channel) int {
		return boolInt(b.Type == discord.GuildCategory) - boolInt(a.Type == discord.GuildCategory)
	})
	for _, c := range changed {
		d.dispatch("CHANNEL_UPDATE", d.wireLocked(c))
	}
	for _, c := range changed {
		if c.Type != discord.GuildCategory && d.botViewsLocked(c) {
			d.threadListSyncLocked(c.ID)
		}
	}
}

// threadListSyncLocked sends THREAD_LIST_SYNC with channel ch's active
// threads. d.mu is held.
func (d *Discord) threadListSyncLocked(ch discord.ChannelID) {
	threads := []discord.Channel{}
	for _, c := range d.guild.Channels {
		if isThread(c.Type) && c.ParentID == ch {
			c.GuildID = d.guild.Guild.ID
			threads = append(threads, c)
		}
	}
	d.dispatch("THREAD_LIST_SYNC", map[string]any{"guild_id": d.guild.Guild.ID, "channel_ids": []discord.ChannelID{ch},
		"threads": threads, "members": []any{}})
}

// visibleLocked is the guild's channels (threads aside) the bot may view:
// what Get Guild Channels answers. d.mu is held.
func (d *Discord) visibleLocked() []discord.Channel {
	out := []discord.Channel{}
	for _, c := range d.guild.Channels {
		if !isThread(c.Type) && d.botViewsLocked(c) {
			c.GuildID = d.guild.Guild.ID
			out = append(out, c)
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
