package bot

import (
	"slices"

	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/gateway"

	"dsearch/shared/api"
)

// addHandlers routes gateway events: places and messages to the batcher,
// interactions to their commands. The handlers run in the order events
// arrive (arikawa's plain handlers each get a goroutine, which could put
// an edit before its message), so they only queue work and return.
func (b *Bot) addHandlers() {
	// A new session: events missed since the last one are gone, so every
	// channel has a gap until its catch-up (GUILD_CREATE queues it). A
	// RESUMED session replays what it missed and keeps them whole.
	b.state.AddSyncHandler(func(e *gateway.ReadyEvent) {
		b.marks.newSession()
		present := make([]discord.GuildID, len(e.Guilds))
		for i, g := range e.Guilds {
			present[i] = g.ID
		}
		b.notePresent(present)
		b.noteStatus(b.status.update(func(s *api.BotStatus) { s.Stopped, s.StoppedAt = "", nil }))
	})
	b.state.AddSyncHandler(func(e *gateway.ResumedEvent) { b.log.Info("gateway session resumed") })
	b.addAccessHandlers()
	b.state.AddSyncHandler(func(e *gateway.GuildCreateEvent) {
		if !b.allowed(e.ID) {
			b.log.Info("guild not in the allowlist; ignored", "guild", e.ID)
			return
		}
		chans := make([]api.Channel, 0, len(e.Channels)+len(e.Threads))
		for i := range e.Channels {
			if !obfuscated(&e.Channels[i]) { // searchd keeps the names it has
				chans = append(chans, channel(&e.Channels[i]))
			}
		}
		for i := range e.Threads {
			chans = append(chans, channel(&e.Threads[i]))
		}
		b.batch.places([]api.Guild{{ID: api.ID(e.ID), Name: e.Name}}, chans)
		b.dropUnlisted(e)
		b.replaceRoles(e.ID, e.Roles)
		for i := range e.Members { // kept too, the bot's own among them
			b.state.MemberSet(e.ID, &e.Members[i], true)
		}
		go b.registerCommands(e.ID)
		// Also after an outage of the guild (same session, nothing sent
		// meanwhile): its channels have a gap until their catch-up.
		for i := range e.Channels {
			b.marks.gap(e.Channels[i].ID)
		}
		for i := range e.Threads {
			b.marks.gap(e.Threads[i].ID)
		}
		b.recheckAccess(e.ID)
		b.queueBackfill(e.ID) // the catch-up always; history with --backfill
	})
	place := func(c *discord.Channel) {
		if b.allowed(c.GuildID) && !obfuscated(c) {
			b.batch.places(nil, []api.Channel{channel(c)})
		}
	}
	b.state.AddSyncHandler(func(e *gateway.ChannelCreateEvent) { place(&e.Channel) })
	b.state.AddSyncHandler(func(e *gateway.ChannelUpdateEvent) { place(&e.Channel) })
	b.state.AddSyncHandler(func(e *gateway.ThreadCreateEvent) {
		place(&e.Channel)
		b.catchUpRejoined(&e.Channel)
		b.catchUpUnsynced(&e.Channel)
	})
	b.state.AddSyncHandler(func(e *gateway.ThreadUpdateEvent) { place(&e.Channel) })
	b.state.AddSyncHandler(func(e *gateway.ThreadListSyncEvent) {
		for i := range e.Threads {
			place(&e.Threads[i])
			b.catchUpUnsynced(&e.Threads[i])
		}
	})
	// Deleted channels and threads, once Discord confirms it (deleted.go),
	// and guilds the bot was removed from, stop being served: searchd
	// forgets them.
	b.state.AddSyncHandler(func(e *gateway.ChannelDeleteEvent) { b.channelDeleted(e.GuildID, e.ID) })
	b.state.AddSyncHandler(func(e *gateway.ThreadDeleteEvent) { b.channelDeleted(e.GuildID, e.ID) })
	b.state.AddSyncHandler(func(e *gateway.GuildDeleteEvent) {
		if !b.allowed(e.ID) {
			return
		}
		if e.Unavailable {
			// An outage: the guild comes back, and its GUILD_CREATE gaps
			// only the channels and active threads it lists; a thread
			// archived meanwhile would stay whole, its mark moved past
			// what was written by the first post that unarchives it.
			if chans, err := b.state.Cabinet.Channels(e.ID); err == nil {
				for _, c := range chans {
					b.marks.gap(c.ID)
				}
			}
			return
		}
		b.log.Warn("the bot was removed from a server; forgetting its messages", "guild", e.ID)
		b.batch.forget(nil, []api.ID{api.ID(e.ID)})
		b.noteStatus(b.status.forgetGuild(e.ID))
	})
	b.state.AddSyncHandler(func(e *gateway.MessageCreateEvent) { b.message(&e.Message, e.Member) })
	b.state.AddSyncHandler(func(e *gateway.MessageUpdateEvent) { b.message(&e.Message, e.Member) })
	b.state.AddSyncHandler(func(e *gateway.MessageDeleteEvent) {
		if b.allowed(e.GuildID) {
			b.batch.deletes(api.ID(e.ID))
		}
	})
	b.state.AddSyncHandler(func(e *gateway.MessageDeleteBulkEvent) {
		if !b.allowed(e.GuildID) {
			return
		}
		ids := make([]api.ID, len(e.IDs))
		for i, id := range e.IDs {
			ids[i] = api.ID(id)
		}
		b.batch.deletes(ids...)
	})
	b.state.AddSyncHandler(func(e *gateway.InteractionCreateEvent) {
		b.active.Add(1)
		go func() {
			defer b.active.Done()
			b.interact(e)
		}()
	})
}

// message syncs a new or edited message. An update without an author is
// Discord filling in link previews: searchd adds them to the stored text
// of a message it has (api.MessageUpsert.Embeds); one with none changes
// nothing searchd keeps.
func (b *Bot) message(m *discord.Message, member *discord.Member) {
	if !b.allowed(m.GuildID) || m.Flags&discord.EphemeralMessage != 0 {
		return
	}
	if !m.Author.ID.IsValid() && (m.Timestamp.IsValid() || len(m.Embeds) == 0) {
		return
	}
	if me, err := b.state.Me(); err == nil && m.Author.ID == me.ID {
		return // our own answers would echo other messages into the index
	}
	b.batch.message(upsert(m, member))
}

// replaceRoles makes the state's roles of guild g the ones a GUILD_CREATE
// gave. arikawa keeps a role it already holds (RoleSet without update)
// and a GUILD_DELETE leaves the guild's roles, so a guild back from an
// outage, or the bot added to it again, in one session kept the
// permissions of before, and members were given channels by them.
func (b *Bot) replaceRoles(g discord.GuildID, roles []discord.Role) {
	held, _ := b.state.Roles(g)
	for _, r := range held {
		if !slices.ContainsFunc(roles, func(x discord.Role) bool { return x.ID == r.ID }) {
			b.state.RoleRemove(g, r.ID)
		}
	}
	for i := range roles {
		b.state.RoleSet(g, &roles[i], true)
	}
}
