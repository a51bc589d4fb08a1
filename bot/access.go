package bot

import (
	"context"
	"errors"
	"slices"

	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/gateway"
	"github.com/diamondburned/arikawa/v3/utils/httputil"

	"dsearch/shared/api"
)

// Discord sends no event of a channel the bot may not view. So while the
// bot may not read a channel, the channel has a gap, and when it may
// again, a catch-up from its mark fetches what was written meanwhile: a
// live message would otherwise move the mark past it, for good.
func (b *Bot) addAccessHandlers() {
	b.state.AddSyncHandler(func(e *gateway.ChannelUpdateEvent) { b.recheckAccess(e.GuildID) })
	// A channel the bot may view again may come as new (deleted.go).
	b.state.AddSyncHandler(func(e *gateway.ChannelCreateEvent) { b.recheckAccess(e.GuildID) })
	b.state.AddSyncHandler(func(e *gateway.GuildRoleCreateEvent) { b.recheckAccess(e.GuildID) })
	b.state.AddSyncHandler(func(e *gateway.GuildRoleUpdateEvent) { b.recheckAccess(e.GuildID) })
	b.state.AddSyncHandler(func(e *gateway.GuildRoleDeleteEvent) { b.recheckAccess(e.GuildID) })
	b.state.AddSyncHandler(func(e *gateway.GuildMemberUpdateEvent) {
		if me, err := b.state.Me(); err == nil && e.User.ID == me.ID {
			// Checked with the member as the event has it: the state asks
			// Discord for the bot's member (no GUILD_MEMBERS intent), which
			// answers with it as it is now, and a role taken and given back
			// before this handler ran (two updates replayed at a RESUME)
			// read as never taken: no gap, nothing caught up.
			m := discord.Member{}
			e.UpdateMember(&m)
			b.recheckAccessAs(e.GuildID, &m)
		}
	})
}

// recheckAccess notes the channels of guild g the bot may no longer read
// (each gets a gap) and those it may read again (the guild is caught up).
func (b *Bot) recheckAccess(g discord.GuildID) { b.recheckAccessAs(g, nil) }

// recheckAccessAs is recheckAccess with the bot's member me (nil: as
// Discord has it now).
func (b *Bot) recheckAccessAs(g discord.GuildID, me *discord.Member) {
	if !b.allowed(g) {
		return
	}
	chans, err := b.state.Channels(g)
	if err != nil {
		return
	}
	reads := b.botReader(g, me) // the state read once, not per channel
	if reads == nil {
		// The state cannot tell (Discord failed on the bot's member): a
		// lost channel must not go unnoticed, so every channel counts as
		// unreadable, with a gap, until a check that can tell.
		b.log.Warn("cannot tell which channels the bot may read; each has a gap until it can", "guild", g)
		reads = func(discord.Channel) bool { return false }
	}
	regained := map[discord.ChannelID]discord.GuildID{}
	b.accessMu.Lock()
	for _, ch := range chans {
		if ch.Type == discord.GuildCategory {
			continue
		}
		switch reads := reads(ch); {
		case !reads:
			// A gap each time, not only the first: a catch-up since
			// (SIGHUP, a new session) may have made the channel whole,
			// and noAccess, set when the state could not tell, stayed.
			b.noAccess[ch.ID] = true
			b.marks.gap(ch.ID)
		case reads && b.noAccess[ch.ID]:
			delete(b.noAccess, ch.ID)
			regained[ch.ID] = g
		}
	}
	b.accessMu.Unlock()
	if len(regained) > 0 {
		// The guild's catch-up, not just these channels': their threads
		// started meanwhile (active, archived, private) are known only
		// from its listing.
		b.log.Info("the bot may read channels again; catching up the server", "guild", g, "channels", len(regained))
		b.queueBackfill(g)
		if b.answers != nil {
			b.answers.retryRefused(api.ID(g))
		}
	}
	b.recheckAnswers(g)
}

// recheckAnswers withdraws the public answers of guild g that show a
// channel no longer shown where they were posted. An answer showed what
// everyone reading its channel could read then (publicFilter); once a
// quoted channel narrows (its overwrites, a role, an age restriction), it
// would go on showing those messages to readers who may no longer read
// them. Every change of access comes here (recheckAccess).
func (b *Bot) recheckAnswers(g discord.GuildID) {
	if b.answers == nil {
		return
	}
	guild, roles, chans, err := b.guildState(g)
	if err != nil {
		return
	}
	b.answers.withdrawIf(api.ID(g), func(a *answer) bool {
		here, err := b.state.Channel(discord.ChannelID(a.Channel))
		if err != nil {
			return false // gone: its deletion withdraws
		}
		if here.Type == discord.GuildAnnouncement {
			// Made one since (a text channel may be): a moderator may now
			// publish the answer to the servers that follow it.
			return true
		}
		// A thread's readers read its parent, a private thread's members
		// too: its answer quoted, besides the thread, what everyone reads.
		scope := here.ID
		if isThread(here.Type) {
			scope = here.ParentID
		}
		restricted := b.ageRestricted(here.ID)
		for _, id := range a.Channels {
			// The state holds every channel the bot views (no request
			// from this handler); an archived thread it lacks is judged
			// by its parent, quoted too.
			c, err := b.state.Cabinet.Channel(discord.ChannelID(id))
			if err != nil {
				// Gone (its deletion withdraws), or hidden from the bot
				// (a CHANNEL_DELETE Discord answered 403), whose readers
				// the bot can no longer tell.
				b.accessMu.Lock()
				hidden := b.noAccess[discord.ChannelID(id)]
				b.accessMu.Unlock()
				if hidden {
					return true
				}
				continue
			}
			if isThread(c.Type) {
				continue // judged by its parent, quoted too
			}
			if !mayShowIn(guild, roles, chans, scope, c.ID) || c.NSFW && !restricted {
				return true
			}
		}
		return false
	})
}

// errPageDisagrees: a page lacks a message Discord still has.
var errPageDisagrees = errors.New("Discord's page lacks a message it still has (its permissions changed meanwhile?); nothing deleted, trying again later")

// confirmDeleted asks Discord for the newest, oldest and middle of the
// stored messages a page says are gone (ids, ascending) before they are
// deleted for good. A page answered while the bot's permissions changed
// says nothing of what was there (without Read Message History, Discord
// answers an empty page, not 403), and the gateway's state, which
// botReadsHistory reads, may not have the change yet (a moment, or the
// whole time the gateway reconnects). One message asked about was not
// enough: if the permission came back before the question and that
// message really was deleted, the page's whole span went with it.
func (b *Bot) confirmDeleted(ctx context.Context, ch discord.ChannelID, ids []api.ID) error {
	probes := []api.ID{ids[len(ids)-1], ids[0], ids[len(ids)/2]}
	for i, id := range probes {
		if slices.Contains(probes[:i], id) {
			continue
		}
		_, err := b.state.Client.WithContext(ctx).Message(ch, discord.MessageID(id))
		var he *httputil.HTTPError
		switch {
		case err == nil:
			return errPageDisagrees
		case errors.As(err, &he) && he.Code == 10008: // Unknown Message
			continue
		case errors.As(err, &he) && he.Status == 403:
			return errNoHistory
		default:
			return err
		}
	}
	return nil
}
