package bot

import (
	"slices"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// Discord shows an age-restricted channel (its "nsfw" flag) only to
// members who confirmed they are adults, whatever their permissions, and
// a bot cannot tell who has. So what the bot shows in a channel that is
// not age-restricted leaves the age-restricted ones out: public answers,
// private ones, /catchup and "Find related conversations" alike (a
// private answer is still shown in that channel, to a member who may be
// a minor). Asked in an age-restricted channel, they count as any other.

// errAgeRestricted is shown when a member names an age-restricted channel
// from one that is not.
var errAgeRestricted error = &userError{id: "ageRestricted"}

// ageRestricted reports whether channel id is age-restricted: a thread
// by its parent. One the bot cannot look up counts as not: the rule then
// leaves age-restricted channels out.
func (b *Bot) ageRestricted(id discord.ChannelID) bool {
	if !id.IsValid() {
		return false
	}
	ch, err := b.state.Channel(id)
	if err != nil {
		return false
	}
	if isThread(ch.Type) {
		p, err := b.state.Channel(ch.ParentID)
		return err == nil && p.NSFW
	}
	return ch.NSFW
}

// shownIn narrows a filter list (channels, no threads: chans says which
// are age-restricted) to what may be shown in channel here, and refuses
// a picked age-restricted channel there.
func (b *Bot) shownIn(here discord.ChannelID, list []api.ID, chans []discord.Channel, picked discord.ChannelID) ([]api.ID, error) {
	if b.ageRestricted(here) {
		return list, nil
	}
	if picked.IsValid() && b.ageRestricted(picked) {
		return nil, errAgeRestricted
	}
	return slices.DeleteFunc(slices.Clone(list), func(id api.ID) bool {
		i := slices.IndexFunc(chans, func(c discord.Channel) bool { return c.ID == discord.ChannelID(id) })
		return i < 0 || chans[i].NSFW
	}), nil
}
