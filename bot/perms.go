package bot

import (
	"fmt"
	"slices"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// readPermissions are what reading a channel's past messages takes.
const readPermissions = discord.PermissionViewChannel | discord.PermissionReadMessageHistory

// readPermissionsIn are what reading ch's past messages takes: a voice or
// stage channel's text chat takes CONNECT as well, since Discord refuses
// its messages to a member who cannot connect (Get Channel Messages in
// Discord's API documentation).
func readPermissionsIn(ch *discord.Channel) discord.Permissions {
	if ch.Type == discord.GuildVoice || ch.Type == discord.GuildStageVoice {
		return readPermissions | discord.PermissionConnect
	}
	return readPermissions
}

// mayRead reports whether member may read ch's past messages.
func mayRead(g *discord.Guild, ch *discord.Channel, member *discord.Member, roles []discord.Role) bool {
	return channelPermissions(g, ch, member, roles).Has(readPermissionsIn(ch))
}

// maxChannels is searchd's limit on a filter list.
const maxChannels = 100

// errNotReadable is shown when a member names a channel they cannot read.
var errNotReadable error = &userError{id: "notReadable"}

// readableChannels lists the guild's channels the member may read, from
// the guild's roles and each channel's overwrites as the gateway gave
// them. Threads are left out: searchd's channel filter brings a channel's
// public threads, which follow their parent's permissions; private
// threads are never searched for a member.
func (b *Bot) readableChannels(guildID discord.GuildID, member *discord.Member) ([]api.ID, error) {
	g, roles, chans, err := b.guildState(guildID)
	if err != nil {
		return nil, err
	}
	var out []api.ID
	for _, ch := range chans {
		if isThread(ch.Type) || ch.Type == discord.GuildCategory {
			continue
		}
		if mayRead(g, &ch, member, roles) {
			out = append(out, api.ID(ch.ID))
		}
	}
	return out, nil
}

// channelPermissions is what member may do in ch, by Discord's documented
// algorithm (developers/topics/permissions, "Permission Hierarchy"): the
// owner may do anything; otherwise the base is the @everyone role's
// permissions and those of the member's roles, and ADMINISTRATOR counts
// only there; then ch's overwrites apply in order: @everyone's, the
// member's roles' (every deny, then every allow), the member's own.
// arikawa's CalcOverrides differs: it honours ADMINISTRATOR set by an
// overwrite, which Discord ignores, and matches overwrites by ID alone.
func channelPermissions(g *discord.Guild, ch *discord.Channel, member *discord.Member, roles []discord.Role) discord.Permissions {
	if obfuscated(ch) {
		// Its overwrites (and age restriction) are Discord's stand-ins:
		// who may read it, the owner aside, cannot be told.
		return 0
	}
	if g.OwnerID == member.User.ID {
		return discord.PermissionAll
	}
	var perms discord.Permissions
	for _, r := range roles {
		if r.ID == discord.RoleID(g.ID) || slices.Contains(member.RoleIDs, r.ID) {
			perms |= r.Permissions
		}
	}
	if perms.Has(discord.PermissionAdministrator) {
		return discord.PermissionAll
	}
	apply := func(o discord.Overwrite) { perms = perms&^o.Deny | o.Allow }
	for _, o := range ch.Overwrites {
		if o.Type == discord.OverwriteRole && o.ID == discord.Snowflake(g.ID) {
			apply(o)
		}
	}
	var roleOverwrite discord.Overwrite
	for _, o := range ch.Overwrites {
		if o.Type == discord.OverwriteRole && o.ID != discord.Snowflake(g.ID) && slices.Contains(member.RoleIDs, discord.RoleID(o.ID)) {
			roleOverwrite.Deny |= o.Deny
			roleOverwrite.Allow |= o.Allow
		}
	}
	apply(roleOverwrite)
	for _, o := range ch.Overwrites {
		if o.Type == discord.OverwriteMember && o.ID == discord.Snowflake(member.User.ID) {
			apply(o)
		}
	}
	// Without VIEW_CHANNEL no other permission of the channel holds.
	if !perms.Has(discord.PermissionViewChannel) {
		return 0
	}
	// A timed-out member keeps only these two (Discord's "Permissions for
	// Timed Out Members"): not Connect, which a voice chat's text takes.
	if until := member.CommunicationDisabledUntil; until.IsValid() && until.Time().After(time.Now()) {
		perms &= discord.PermissionViewChannel | discord.PermissionReadMessageHistory
	}
	return perms
}

// guildState is what permissions are computed from, as the gateway
// delivered it.
func (b *Bot) guildState(id discord.GuildID) (*discord.Guild, []discord.Role, []discord.Channel, error) {
	g, err := b.state.Guild(id)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("this server is not known yet: %w", err)
	}
	roles, err := b.state.Roles(id)
	if err != nil {
		return nil, nil, nil, err
	}
	chans, err := b.state.Channels(id)
	if err != nil {
		return nil, nil, nil, err
	}
	return g, roles, chans, nil
}

// channelFilter is the channel list a member's search asked in here runs
// with: the one they picked (which they must be able to read, directly or
// as a public thread's parent) or every channel they can read, less the
// age-restricted ones when here is not (shownIn).
func (b *Bot) channelFilter(guildID discord.GuildID, member *discord.Member, here, picked discord.ChannelID) ([]api.ID, error) {
	readable, err := b.readableChannels(guildID, member)
	if err != nil {
		return nil, err
	}
	_, _, chans, err := b.guildState(guildID)
	if err != nil {
		return nil, err
	}
	if readable, err = b.shownIn(here, readable, chans, picked); err != nil {
		return nil, err
	}
	return b.pick(readable, picked, errNotReadable)
}

// errNotShared is shown when a public answer names a channel some reader
// of the channel it is posted in cannot read.
var errNotShared error = &userError{id: "notShared"}

// mayShowIn reports whether a public answer in a channel of scope (here,
// or a public thread's parent) may show channel id's messages to all who
// see it, whoever asked: who may view scope sees the answer posted, so
// only if they may all read its history may it show scope's past, and
// only a channel everyone reads may it show of the rest. (publicFilter
// also needs the asker to read id; shownIn keeps age-restricted channels
// out of the others.)
func mayShowIn(g *discord.Guild, roles []discord.Role, chans []discord.Channel, scope, id discord.ChannelID) bool {
	i := slices.IndexFunc(chans, func(c discord.Channel) bool { return c.ID == id })
	if i < 0 {
		return false
	}
	if id == scope {
		return viewersReadHistory(g, &chans[i], roles)
	}
	return everyoneReads(g, &chans[i], roles)
}

// publicFilter is the channel list of an answer posted in here for all
// its readers to see: the channels the asker may read that every reader
// of here may read too. That is here itself (for a thread: a public
// thread's parent, whose public threads come with it; a private thread
// alone) and the channels every member of the server may read. A channel
// that only some of here's readers may read is left out even if all of
// them happen to: the bot does not see the member list (a privileged
// intent), so it cannot tell. Nor an age-restricted channel unless here
// is one (shownIn).
func (b *Bot) publicFilter(guildID discord.GuildID, member *discord.Member, here, picked discord.ChannelID) ([]api.ID, error) {
	readable, err := b.readableChannels(guildID, member)
	if err != nil {
		return nil, err
	}
	g, roles, chans, err := b.guildState(guildID)
	if err != nil {
		return nil, err
	}
	ch, err := b.state.Channel(here)
	if err != nil {
		// Neither the state nor Discord tells what here is (a channel the
		// bot may no longer view: CHANNEL_DELETE, then 403): it may be an
		// announcement channel, and the bot could not take the answer
		// back there.
		return nil, &userError{id: "hereUnknown"}
	}
	if !b.botViews(g, roles, chans, ch) {
		// Editing or deleting the answer later takes viewing here: it
		// could never be withdrawn.
		return nil, &userError{id: "hereUnknown"}
	}
	if ch.Type == discord.GuildAnnouncement {
		// A moderator may publish any message of it to the servers that
		// follow it, whose members the rule below knows nothing of.
		return nil, &userError{id: "announcement"}
	}
	scope := here
	if isThread(ch.Type) && ch.Type != discord.GuildPrivateThread {
		scope = ch.ParentID
	}
	shared := []api.ID{}
	if ch.Type == discord.GuildPrivateThread {
		// The asker is in it; its readers are its members, who read its
		// past by the parent's Read Message History, as the asker must:
		// only if all of them may does the answer show it.
		if i := slices.IndexFunc(chans, func(c discord.Channel) bool { return c.ID == ch.ParentID }); i >= 0 &&
			mayRead(g, &chans[i], member, roles) && viewersReadHistory(g, &chans[i], roles) {
			shared = append(shared, api.ID(here))
		}
	}
	for _, id := range readable {
		if mayShowIn(g, roles, chans, scope, discord.ChannelID(id)) {
			shared = append(shared, id)
		}
	}
	if shared, err = b.shownIn(here, shared, chans, picked); err != nil {
		return nil, err
	}
	return b.pick(shared, picked, errNotShared)
}

// ownMember is the bot's own member in guild g, whose roles say what it
// may view and read.
func (b *Bot) ownMember(g discord.GuildID) (*discord.Member, error) {
	me, err := b.state.Me()
	if err != nil {
		return nil, err
	}
	return b.state.Member(g, me.ID)
}

// botViews reports whether the bot may view ch (a thread: its parent),
// which editing or deleting its own message there takes.
func (b *Bot) botViews(g *discord.Guild, roles []discord.Role, chans []discord.Channel, ch *discord.Channel) bool {
	member, err := b.ownMember(g.ID)
	if err != nil {
		return false
	}
	if isThread(ch.Type) {
		i := slices.IndexFunc(chans, func(c discord.Channel) bool { return c.ID == ch.ParentID })
		if i < 0 {
			return false
		}
		ch = &chans[i]
	}
	return channelPermissions(g, ch, member, roles).Has(discord.PermissionViewChannel)
}

// everyoneReads reports whether every member of the server may read ch:
// a member with no role and no overwrite of their own may, and no role or
// member overwrite takes a reading permission away from anyone. Never a
// voice or stage channel's chat, which takes Connect: any member may be
// timed out, and then may not connect.
func everyoneReads(g *discord.Guild, ch *discord.Channel, roles []discord.Role) bool {
	if readPermissionsIn(ch).Has(discord.PermissionConnect) {
		return false
	}
	for _, o := range ch.Overwrites {
		if o.ID != discord.Snowflake(g.ID) && o.Deny&readPermissionsIn(ch) != 0 {
			return false
		}
	}
	nobody := discord.Member{User: discord.User{ID: discord.UserID(g.ID)}} // no user has the guild's ID
	return mayRead(g, ch, &nobody, roles)
}

// viewersReadHistory reports whether everyone who may view ch may also
// read its past messages (Read Message History; Connect too for a voice
// or stage channel's text chat). Discord shows a channel's new messages to
// a member who may view it without its history, so an answer posted there
// reaches them: it may quote the channel's past only if they could read
// it. Roles only add permissions, so it holds when @everyone has them in
// ch and no other overwrite takes them away.
func viewersReadHistory(g *discord.Guild, ch *discord.Channel, roles []discord.Role) bool {
	need := readPermissionsIn(ch) &^ discord.PermissionViewChannel
	var base discord.Permissions
	for _, r := range roles {
		if r.ID == discord.RoleID(g.ID) {
			base = r.Permissions
		}
	}
	if base.Has(discord.PermissionAdministrator) {
		return true
	}
	for _, o := range ch.Overwrites {
		switch {
		case o.Type == discord.OverwriteRole && o.ID == discord.Snowflake(g.ID):
			base = base&^o.Deny | o.Allow
		case o.Deny&need != 0:
			return false
		}
	}
	return base.Has(need)
}

// pick narrows a filter list to the channel a member picked, which must
// be on it directly, or be a public thread whose parent is; refused is
// the error when it is not. Without a pick the whole list is the filter.
func (b *Bot) pick(allowed []api.ID, picked discord.ChannelID, refused error) ([]api.ID, error) {
	if picked.IsValid() {
		target := picked
		if ch, err := b.state.Channel(picked); err == nil && isThread(ch.Type) && ch.Type != discord.GuildPrivateThread {
			target = ch.ParentID
		}
		if slices.Contains(allowed, api.ID(target)) {
			return []api.ID{api.ID(picked)}, nil
		}
		return nil, refused
	}
	switch {
	case len(allowed) == 0:
		return nil, &userError{id: "noChannels"}
	case len(allowed) > maxChannels:
		return nil, &userError{id: "tooMany", args: []any{len(allowed), maxChannels}}
	}
	return allowed, nil
}

// channelObfuscated is the flag Discord sets (since 2026-10-12) on a
// channel the gateway sends a bot that may not view it: its name becomes
// "___hidden___", its overwrites one that denies @everyone View Channel,
// and its other fields but ID, type, position and parent "should not be
// relied on" (discord-api-docs, Obfuscated Channels). It stays so until
// the bot may view it again, when a CHANNEL_UPDATE brings the real one.
const channelObfuscated discord.ChannelFlags = 1 << 17

// obfuscated: the bot's state holds Discord's stand-in for ch, not ch.
// Nobody is taken to read it (its stored history is shown to no one, not
// even the owner, since whether it is age-restricted is hidden too), and
// its name is not handed to searchd.
func obfuscated(ch *discord.Channel) bool { return ch.Flags&channelObfuscated != 0 }
