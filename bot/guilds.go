package bot

import (
	"context"
	"slices"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// notePresent hands the guilds a READY lists to the backfill loop,
// replacing a list it has not taken yet.
func (b *Bot) notePresent(guilds []discord.GuildID) {
	if b.present == nil {
		return
	}
	for {
		select {
		case b.present <- guilds:
			return
		default:
		}
		select {
		case <-b.present:
		default:
		}
	}
}

// forgetLeftGuilds forgets the servers the bot was removed from while it
// was not listening: their GUILD_DELETE never came. READY lists every
// guild the bot is in; a guild searchd holds that it does not list, that
// the allowlist admits, and that the bot itself synced (a channel of it
// has a sync mark: an imported server the bot never joined is the
// operator's, and stays) costs one REST request, and is forgotten as
// GUILD_DELETE forgets it only if Discord answers 403 Missing Access or
// 404 Unknown Guild (notInGuild). It returns the number forgotten.
func (b *Bot) forgetLeftGuilds(ctx context.Context, present []discord.GuildID) (int, error) {
	chans, err := retryFunc(ctx, b, func() ([]api.Channel, error) { return b.searchd.Channels(ctx) })
	if err != nil {
		return 0, err
	}
	synced := map[discord.GuildID][]discord.ChannelID{}
	for _, c := range chans {
		g := discord.GuildID(c.GuildID)
		if !b.allowed(g) || slices.Contains(present, g) {
			continue
		}
		if _, ok := synced[g]; !ok {
			synced[g] = nil
		}
		if b.marks.has(discord.ChannelID(c.ID)) {
			synced[g] = append(synced[g], discord.ChannelID(c.ID))
		}
	}
	var gone []api.ID
	for g, marked := range synced {
		if len(marked) == 0 {
			continue
		}
		if _, err := b.state.WithContext(ctx).Client.Guild(g); !notInGuild(err) {
			continue // still a member, or Discord did not say: keep it
		}
		gone = append(gone, api.ID(g))
		for _, ch := range marked {
			b.marks.forget(ch)
		}
		if b.status != nil { // a full reconciliation leaves the status to the bot
			b.noteStatus(b.status.forgetGuild(g))
		}
	}
	if len(gone) > 0 {
		b.log.Info("forgetting servers the bot was removed from while it was away", "guilds", len(gone))
		b.batch.forget(nil, gone)
	}
	return len(gone), nil
}

// has reports whether the bot keeps a sync mark for ch: it synced it.
func (m *marks) has(ch discord.ChannelID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.through[ch]
	return ok
}
