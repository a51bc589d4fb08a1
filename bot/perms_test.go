package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
)

// TestChannelPermissions is a table of the cases Discord's permission
// documentation describes ("Permission Hierarchy", "Permission
// Overwrites"), each asking whether a member may read a channel.
func TestChannelPermissions(t *testing.T) {
	const (
		guild             = 10
		mods, muted, fans = 11, 12, 13
		member, other     = 20, 21
		owner             = 30
	)
	read := readPermissions
	view := discord.PermissionViewChannel
	admin := discord.PermissionAdministrator
	everyone := func(allow, deny discord.Permissions) discord.Overwrite {
		return discord.Overwrite{ID: guild, Type: discord.OverwriteRole, Allow: allow, Deny: deny}
	}
	role := func(id discord.Snowflake, allow, deny discord.Permissions) discord.Overwrite {
		return discord.Overwrite{ID: id, Type: discord.OverwriteRole, Allow: allow, Deny: deny}
	}
	user := func(id discord.Snowflake, allow, deny discord.Permissions) discord.Overwrite {
		return discord.Overwrite{ID: id, Type: discord.OverwriteMember, Allow: allow, Deny: deny}
	}
	for _, tc := range []struct {
		name       string
		everyone   discord.Permissions // the @everyone role's permissions
		roles      []discord.RoleID    // the member's roles
		rolePerms  discord.Permissions // what the mods role grants
		who        discord.UserID
		overwrites []discord.Overwrite
		want       bool
	}{
		{name: "@everyone may read", everyone: read, want: true},
		{name: "nobody may read", everyone: 0, want: false},
		{name: "view without history is not reading", everyone: view, want: false},
		{name: "a role grants what @everyone lacks", everyone: 0, roles: []discord.RoleID{mods}, rolePerms: read, want: true},
		{name: "the owner reads through every deny", who: owner, everyone: 0,
			overwrites: []discord.Overwrite{everyone(0, read), user(owner, 0, read)}, want: true},
		{name: "ADMINISTRATOR from a role reads through every deny", everyone: read, roles: []discord.RoleID{mods}, rolePerms: admin,
			overwrites: []discord.Overwrite{everyone(0, view), role(mods, 0, view), user(member, 0, view)}, want: true},
		{name: "ADMINISTRATOR allowed by a role overwrite is ignored", everyone: read, roles: []discord.RoleID{mods},
			overwrites: []discord.Overwrite{everyone(0, view), role(mods, admin, 0)}, want: false},
		{name: "ADMINISTRATOR allowed by a member overwrite is ignored", everyone: read,
			overwrites: []discord.Overwrite{everyone(0, view), user(member, admin, 0)}, want: false},
		{name: "@everyone overwrite denies", everyone: read, overwrites: []discord.Overwrite{everyone(0, view)}, want: false},
		{name: "@everyone overwrite allows", everyone: 0, overwrites: []discord.Overwrite{everyone(read, 0)}, want: true},
		{name: "a role overwrite allows past @everyone's deny", everyone: read, roles: []discord.RoleID{mods},
			overwrites: []discord.Overwrite{everyone(0, view), role(mods, view, 0)}, want: true},
		{name: "a role overwrite denies past @everyone's allow", everyone: 0, roles: []discord.RoleID{muted},
			overwrites: []discord.Overwrite{everyone(read, 0), role(muted, 0, view)}, want: false},
		{name: "one role's allow beats another role's deny", everyone: read, roles: []discord.RoleID{muted, fans},
			overwrites: []discord.Overwrite{role(muted, 0, view), role(fans, view, 0)}, want: true},
		{name: "a member overwrite denies past a role's allow", everyone: 0, roles: []discord.RoleID{mods},
			overwrites: []discord.Overwrite{role(mods, read, 0), user(member, 0, view)}, want: false},
		{name: "a member overwrite allows past a role's deny", everyone: read, roles: []discord.RoleID{muted},
			overwrites: []discord.Overwrite{role(muted, 0, view), user(member, view, 0)}, want: true},
		{name: "an overwrite for a role the member lacks does nothing", everyone: read,
			overwrites: []discord.Overwrite{role(muted, 0, view)}, want: true},
		{name: "an overwrite for another member does nothing", everyone: read,
			overwrites: []discord.Overwrite{user(other, 0, view)}, want: true},
		{name: "a member overwrite is not read as a role's", everyone: read, roles: []discord.RoleID{mods},
			overwrites: []discord.Overwrite{user(mods, 0, view)}, want: true},
		{name: "a deleted role grants nothing", everyone: 0, roles: []discord.RoleID{99}, want: false},
		{name: "history denied, view allowed", everyone: read,
			overwrites: []discord.Overwrite{everyone(0, discord.PermissionReadMessageHistory)}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := discord.Guild{ID: guild, OwnerID: owner}
			roles := []discord.Role{{ID: guild, Permissions: tc.everyone}, {ID: mods, Permissions: tc.rolePerms},
				{ID: muted}, {ID: fans}}
			who := tc.who
			if who == 0 {
				who = member
			}
			m := discord.Member{User: discord.User{ID: who}, RoleIDs: tc.roles}
			ch := discord.Channel{ID: 40, Type: discord.GuildText, Overwrites: tc.overwrites}
			if got := channelPermissions(&g, &ch, &m, roles).Has(readPermissions); got != tc.want {
				t.Errorf("may read: %v, want %v", got, tc.want)
			}
		})
	}
}

// A voice or stage channel's text chat takes CONNECT too: Discord does not
// give its messages to a member who may see the channel but not connect
// (a "locked" voice room), so neither does a search, private or public.
func TestVoiceChatTakesConnect(t *testing.T) {
	const guild, regulars, member = 10, 11, 20
	read := readPermissions
	g := discord.Guild{ID: guild, OwnerID: 30}
	roles := []discord.Role{{ID: guild, Permissions: read | discord.PermissionConnect}, {ID: regulars}}
	locked := []discord.Overwrite{
		{ID: guild, Type: discord.OverwriteRole, Deny: discord.PermissionConnect},
		{ID: regulars, Type: discord.OverwriteRole, Allow: discord.PermissionConnect},
	}
	newcomer := discord.Member{User: discord.User{ID: member}}
	regular := discord.Member{User: discord.User{ID: member}, RoleIDs: []discord.RoleID{regulars}}
	for _, kind := range []discord.ChannelType{discord.GuildVoice, discord.GuildStageVoice} {
		ch := discord.Channel{ID: 40, Type: kind, Overwrites: locked}
		if mayRead(&g, &ch, &newcomer, roles) {
			t.Errorf("%v: a member who cannot connect may read its chat", kind)
		}
		if !mayRead(&g, &ch, &regular, roles) {
			t.Errorf("%v: a member who may connect may not read its chat", kind)
		}
		if everyoneReads(&g, &ch, roles) {
			t.Errorf("%v: a locked voice chat counts as read by everyone (public answers)", kind)
		}
		// Open, it is read by a member with no role, but not by everyone:
		// a timed-out member may not connect.
		open := discord.Channel{ID: 41, Type: kind}
		if !mayRead(&g, &open, &newcomer, roles) || everyoneReads(&g, &open, roles) {
			t.Errorf("%v: an open voice chat is not read by a newcomer, or counts as read by everyone", kind)
		}
	}
	// A text channel does not ask for CONNECT.
	text := discord.Channel{ID: 42, Type: discord.GuildText, Overwrites: locked}
	if !mayRead(&g, &text, &newcomer, roles) {
		t.Error("a text channel asked for CONNECT")
	}
}

// everyoneReads decides what a public answer may show: a channel counts
// only if no member of the server is kept from reading it, by @everyone's
// permissions or by any role or member overwrite.
func TestEveryoneReads(t *testing.T) {
	const guild, muted, member = 10, 11, 20
	read := readPermissions
	view := discord.PermissionViewChannel
	g := discord.Guild{ID: guild, OwnerID: 30}
	for _, tc := range []struct {
		name       string
		everyone   discord.Permissions
		overwrites []discord.Overwrite
		want       bool
	}{
		{name: "open to @everyone", everyone: read, want: true},
		{name: "@everyone may not read", everyone: view, want: false},
		{name: "@everyone denied by an overwrite", everyone: read,
			overwrites: []discord.Overwrite{{ID: guild, Type: discord.OverwriteRole, Deny: view}}, want: false},
		{name: "@everyone allowed by an overwrite", everyone: 0,
			overwrites: []discord.Overwrite{{ID: guild, Type: discord.OverwriteRole, Allow: read}}, want: true},
		{name: "a role is denied", everyone: read,
			overwrites: []discord.Overwrite{{ID: muted, Type: discord.OverwriteRole, Deny: view}}, want: false},
		{name: "a role is denied history", everyone: read,
			overwrites: []discord.Overwrite{{ID: muted, Type: discord.OverwriteRole, Deny: discord.PermissionReadMessageHistory}}, want: false},
		{name: "a member is denied", everyone: read,
			overwrites: []discord.Overwrite{{ID: member, Type: discord.OverwriteMember, Deny: view}}, want: false},
		{name: "a role is allowed more", everyone: read,
			overwrites: []discord.Overwrite{{ID: muted, Type: discord.OverwriteRole, Allow: discord.PermissionSendMessages}}, want: true},
	} {
		roles := []discord.Role{{ID: guild, Permissions: tc.everyone}, {ID: muted}}
		ch := discord.Channel{ID: 40, Type: discord.GuildText, Overwrites: tc.overwrites}
		if got := everyoneReads(&g, &ch, roles); got != tc.want {
			t.Errorf("%s: everyone reads %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The bot pages through a voice channel's text chat only where it may
// connect, as Discord serves it: one it cannot connect to would cost 403s.
func TestBackfillSkipsVoiceChatWithoutConnect(t *testing.T) {
	const voiceLocked, voiceOpen = 2100, 2101
	said := func(ch discord.ChannelID, text string) discord.Message {
		return message(ch, user(alice, "alice"), t0.Add(time.Hour), text)
	}
	e := setup(t, func(d *discordtest.Discord) {
		// @everyone (the bot included) may view and read history, not connect.
		d.CreateChannel(discord.Channel{ID: voiceLocked, Type: discord.GuildVoice, Name: "locked room"})
		d.CreateChannel(discord.Channel{ID: voiceOpen, Type: discord.GuildStageVoice, Name: "stage", Overwrites: []discord.Overwrite{
			{ID: guildID, Type: discord.OverwriteRole, Allow: discord.PermissionConnect}}})
		d.AddHistory(said(voiceLocked, "voice chat the bot cannot connect to"), said(voiceOpen, "stage chat"))
	})
	waitFor(t, "the backfill", func() bool { return strings.Contains(e.log.String(), "backfill: guild done") })
	if len(e.discord.Calls("GET", "/channels/2101/messages")) == 0 {
		t.Error("the stage channel the bot may connect to was not paged")
	}
	if calls := e.discord.Calls("GET", "/channels/2100/messages"); len(calls) > 0 {
		t.Errorf("the voice channel the bot cannot connect to was asked for %d pages", len(calls))
	}
}

// A timed-out member loses every permission but View Channel
// and Read Message History (Discord's documentation, "Permissions for
// Timed Out Members"), Connect included, and the bot holds that reading
// a voice or stage channel's chat takes Connect (readPermissionsIn,
// TestVoiceChatTakesConnect). channelPermissions never looks at
// communication_disabled_until, so a timed-out member's searches still
// cover voice chats Discord would not show them, and an open voice chat
// still counts as read by everyone for a public answer, which reaches
// timed-out readers of the channel it is posted in.
func TestTimedOutMemberCannotConnect(t *testing.T) {
	const guild, member = 10, 20
	g := discord.Guild{ID: guild, OwnerID: 30}
	roles := []discord.Role{{ID: guild, Permissions: readPermissions | discord.PermissionConnect | discord.PermissionSendMessages}}
	timedOut := discord.Member{User: discord.User{ID: member},
		CommunicationDisabledUntil: discord.NewTimestamp(time.Now().Add(24 * time.Hour))}
	for _, kind := range []discord.ChannelType{discord.GuildVoice, discord.GuildStageVoice} {
		ch := discord.Channel{ID: 40, Type: kind}
		if p := channelPermissions(&g, &ch, &timedOut, roles); p.Has(discord.PermissionConnect) || mayRead(&g, &ch, &timedOut, roles) {
			t.Errorf("%v: a timed-out member has %v and may read its chat", kind, p)
		}
	}
	text := discord.Channel{ID: 42, Type: discord.GuildText}
	if !mayRead(&g, &text, &timedOut, roles) {
		t.Error("a timed-out member may no longer read a text channel (they keep View and History)")
	}
}
