package bot

import (
	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/gateway"
)

// dropUnlisted rids the state of what a guild's GUILD_CREATE no longer
// lists. arikawa's state adds what the event lists and removes nothing,
// and Discord sends no event of an unavailable guild: a channel deleted
// during an outage stayed in the state, so members kept searching it and
// the guild's catch-up (forgetVanished) skipped it as known.
//
// The event lists every channel of the guild (one the bot may not view
// too, obfuscated), so a channel it leaves out is deleted: it is taken as
// its CHANNEL_DELETE would have been (channelDeleted: a gap, and forgotten
// with its threads once Discord confirms). It lists only active threads,
// so one it leaves out may just be archived: it leaves the state only,
// and the catch-up's forgetVanished asks Discord (404: it is forgotten).
func (b *Bot) dropUnlisted(e *gateway.GuildCreateEvent) {
	if e.Unavailable {
		return // lists nothing
	}
	listed := make(map[discord.ChannelID]bool, len(e.Channels)+len(e.Threads))
	for i := range e.Channels {
		listed[e.Channels[i].ID] = true
	}
	for i := range e.Threads {
		listed[e.Threads[i].ID] = true
	}
	held, err := b.state.Cabinet.Channels(e.ID)
	if err != nil {
		return
	}
	gone := 0
	for _, c := range held {
		if !listed[c.ID] && !isThread(c.Type) {
			b.channelDeleted(e.ID, c.ID) // before the state loses its threads: they get gaps too
			gone++
		}
	}
	for _, c := range held {
		if !listed[c.ID] {
			b.state.Cabinet.ChannelRemove(&c)
		}
	}
	if gone > 0 {
		b.log.Info("channels deleted while the server was unavailable; forgetting them once Discord confirms", "guild", e.ID, "channels", gone)
	}
}
