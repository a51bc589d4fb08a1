package discordtest

import (
	"slices"

	"github.com/diamondburned/arikawa/v3/discord"
)

// What Discord sends when a server's roles, channels or members change.
// Each helper changes the fake's guild (so later interactions and REST
// answers show the change) and dispatches the gateway event Discord would
// send for it, only when the bot's intents ask for that event.

// intentGuilds and intentGuildMembers are the gateway intents that carry
// role and channel events, and member events (privileged).
const (
	intentGuilds       = 1 << 0
	intentGuildMembers = 1 << 1
	// intentMessageContent is privileged: see MessageContentIntentOff.
	intentMessageContent = 1 << 15
)

// Member returns a member as Discord knows them now: what an interaction
// from them carries in its member field.
func (d *Discord) Member(id discord.UserID) (discord.Member, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.guild.Members {
		if m.User.ID == id {
			return m, true
		}
	}
	return discord.Member{}, false
}

// UpdateMember changes a member (their roles, say). Discord sends
// GUILD_MEMBER_UPDATE only to bots with the privileged GUILD_MEMBERS
// intent: a bot without it learns of the change from the member data of
// the member's next interaction. Of the bot's own member it is sent
// whatever the intents (the gateway docs' caveats: "Guild Member Update
// is sent for current-user updates regardless of whether the
// GUILD_MEMBERS intent is set", quoted in Javacord/Javacord#1052; also
// discordjs/discord.js#4952, Kraigie/nostrum#298).
func (d *Discord) UpdateMember(m discord.Member) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.IndexFunc(d.guild.Members, func(o discord.Member) bool { return o.User.ID == m.User.ID })
	if i < 0 {
		d.t.Fatalf("discordtest: no member %d", m.User.ID)
	}
	before := d.viewsLocked()
	d.guild.Members[i] = m
	d.memberUpdate(m)
	d.viewChangedLocked(before) // the bot's own roles changed
}

// memberUpdate sends GUILD_MEMBER_UPDATE if the bot asked for it, or the
// member is the bot's own; d.mu is held.
func (d *Discord) memberUpdate(m discord.Member) {
	if d.intents&intentGuildMembers == 0 && m.User.ID != d.Me.ID {
		return
	}
	if err := d.send(0, "GUILD_MEMBER_UPDATE", map[string]any{"guild_id": d.guild.Guild.ID, "roles": m.RoleIDs,
		"user": m.User, "nick": m.Nick, "joined_at": m.Joined}); err != nil {
		d.t.Fatalf("discordtest: GUILD_MEMBER_UPDATE: %v", err)
	}
}

// UpdateChannel changes a channel (its permission overwrites, say) and
// sends CHANNEL_UPDATE, or THREAD_UPDATE for a thread.
func (d *Discord) UpdateChannel(ch discord.Channel) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	ch.GuildID = d.guild.Guild.ID
	i := slices.IndexFunc(d.guild.Channels, func(o discord.Channel) bool { return o.ID == ch.ID })
	if i < 0 {
		d.t.Fatalf("discordtest: no channel %d", ch.ID)
	}
	viewed := d.botPermissionsLocked(ch.ID).Has(discord.PermissionViewChannel)
	before := d.viewsLocked()
	d.guild.Channels[i] = ch
	event := "CHANNEL_UPDATE"
	if ch.Type == discord.GuildPublicThread || ch.Type == discord.GuildPrivateThread || ch.Type == discord.GuildAnnouncementThread {
		event = "THREAD_UPDATE"
	}
	if d.intents&intentGuilds == 0 {
		return
	}
	if views := d.botPermissionsLocked(ch.ID).Has(discord.PermissionViewChannel); d.deleteOnAccessLoss && views != viewed && !isThread(ch.Type) {
		d.accessChanged(ch, views)
		return
	}
	if isThread(ch.Type) {
		if views := d.botPermissionsLocked(ch.ID).Has(discord.PermissionViewChannel); views {
			d.dispatch(event, ch) // not sent of a thread in a channel the bot may not view
		}
		return
	}
	// The channel itself, a stand-in if the bot may not view it (with
	// its category's too if the bot's view of that changed with it).
	if before[ch.ID] == d.botViewsLocked(ch) {
		d.dispatch(event, d.wireLocked(ch))
	}
	d.viewChangedLocked(before)
}

// UpdateRole changes a role (its permissions, say) and sends
// GUILD_ROLE_UPDATE.
func (d *Discord) UpdateRole(r discord.Role) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	roles := d.guild.Guild.Roles
	i := slices.IndexFunc(roles, func(o discord.Role) bool { return o.ID == r.ID })
	if i < 0 {
		d.t.Fatalf("discordtest: no role %d", r.ID)
	}
	before := d.viewsLocked()
	roles[i] = r
	if d.intents&intentGuilds == 0 {
		return
	}
	if err := d.send(0, "GUILD_ROLE_UPDATE", map[string]any{"guild_id": d.guild.Guild.ID, "role": r}); err != nil {
		d.t.Fatalf("discordtest: GUILD_ROLE_UPDATE: %v", err)
	}
	d.viewChangedLocked(before)
}

// DeleteRole deletes a role: Discord sends GUILD_ROLE_DELETE, takes the
// role from every member who had it and, to bots with GUILD_MEMBERS,
// sends their GUILD_MEMBER_UPDATEs.
func (d *Discord) DeleteRole(id discord.RoleID) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	g := &d.guild.Guild
	i := slices.IndexFunc(g.Roles, func(o discord.Role) bool { return o.ID == id })
	if i < 0 {
		d.t.Fatalf("discordtest: no role %d", id)
	}
	before := d.viewsLocked()
	g.Roles = slices.Delete(g.Roles, i, i+1)
	if d.intents&intentGuilds != 0 {
		if err := d.send(0, "GUILD_ROLE_DELETE", map[string]any{"guild_id": g.ID, "role_id": id}); err != nil {
			d.t.Fatalf("discordtest: GUILD_ROLE_DELETE: %v", err)
		}
	}
	for j, m := range d.guild.Members {
		if k := slices.Index(m.RoleIDs, id); k >= 0 {
			m.RoleIDs = slices.Delete(slices.Clone(m.RoleIDs), k, k+1)
			d.guild.Members[j] = m
			d.memberUpdate(m)
		}
	}
	d.viewChangedLocked(before)
}

// DeleteOnAccessLoss makes the fake tell the bot of a channel it may no
// longer view (UpdateChannel) as if the channel were deleted: CHANNEL_DELETE,
// and THREAD_DELETE for each of its active threads; and of one it may
// view again as if it were new: CHANNEL_CREATE, and THREAD_LIST_SYNC with
// its active threads. An audit suspected Discord does so (its docs say
// CHANNEL_DELETE is sent for a channel "relevant to the current user",
// and THREAD_LIST_SYNC "when the current user gains access to a
// channel"); the bot must not take such an event at its word.
func (d *Discord) DeleteOnAccessLoss(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deleteOnAccessLoss = on
}

// accessChanged sends what DeleteOnAccessLoss describes for channel ch,
// which the bot may now view or not; d.mu is held.
func (d *Discord) accessChanged(ch discord.Channel, views bool) {
	var threads []discord.Channel
	for _, c := range d.guild.Channels {
		if isThread(c.Type) && c.ParentID == ch.ID {
			c.GuildID = d.guild.Guild.ID
			threads = append(threads, c)
		}
	}
	if !views {
		for _, t := range threads {
			d.dispatch("THREAD_DELETE", map[string]any{"id": t.ID, "guild_id": t.GuildID, "parent_id": t.ParentID, "type": t.Type})
		}
		d.dispatch("CHANNEL_DELETE", ch)
		return
	}
	d.dispatch("CHANNEL_CREATE", ch)
	if threads == nil {
		threads = []discord.Channel{}
	}
	d.dispatch("THREAD_LIST_SYNC", map[string]any{"guild_id": d.guild.Guild.ID, "channel_ids": []discord.ChannelID{ch.ID},
		"threads": threads, "members": []any{}})
}
