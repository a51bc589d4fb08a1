package bot

import (
	"context"
	"errors"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/utils/httputil"

	"dsearch/shared/api"
)

// A CHANNEL_DELETE or THREAD_DELETE is not taken at its word: Discord's
// docs send it for a channel "relevant to the current user", and an
// audit suspected it comes too when the bot only lost View Channel there
// (libraries drop such channels from their caches alike). Forgetting a
// channel that still exists throws its history away for good, so the bot
// asks Discord (Get Channel) first: only 404 Unknown Channel forgets it;
// 403 Missing Access is access lost (a gap, kept, caught up once it
// comes back); a channel still there is caught up; and a question Discord
// did not answer is asked again later, never taken for a deletion.

// deletion is a CHANNEL_DELETE or THREAD_DELETE to confirm.
type deletion struct {
	g       discord.GuildID
	ch      discord.ChannelID
	attempt int
}

// channelDeleted notes a CHANNEL_DELETE or THREAD_DELETE: the channel
// (and the threads the state holds of it) has a gap at once, since no
// event of it comes whatever the answer, and Discord is asked whether it
// is gone (confirmDeletions).
func (b *Bot) channelDeleted(g discord.GuildID, ch discord.ChannelID) {
	if !b.allowed(g) {
		return
	}
	b.marks.gap(ch)
	if chans, err := b.state.Cabinet.Channels(g); err == nil {
		for _, c := range chans {
			if c.ParentID == ch && isThread(c.Type) {
				b.marks.gap(c.ID)
			}
		}
	}
	b.queueDeletion(deletion{g: g, ch: ch})
}

func (b *Bot) queueDeletion(d deletion) {
	b.deletionMu.Lock()
	b.deletions = append(b.deletions, d)
	b.deletionMu.Unlock()
	select {
	case b.deletionKick <- struct{}{}:
	default:
	}
}

// confirmDeletions asks Discord about each deletion queued, in order,
// until ctx ends.
func (b *Bot) confirmDeletions(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.deletionKick:
		}
		for {
			b.deletionMu.Lock()
			if len(b.deletions) == 0 {
				b.deletionMu.Unlock()
				break
			}
			d := b.deletions[0]
			b.deletions = b.deletions[1:]
			b.deletionMu.Unlock()
			b.confirmDeletion(ctx, d)
			if ctx.Err() != nil {
				return
			}
		}
	}
}

// confirmDeletion acts on Discord's answer about one deleted channel.
func (b *Bot) confirmDeletion(ctx context.Context, d deletion) {
	c, err := b.state.WithContext(ctx).Client.Channel(d.ch)
	var he *httputil.HTTPError
	switch {
	case ctx.Err() != nil:
	case unknownChannel(err):
		b.forgetChannel(d.g, d.ch)
	case errors.As(err, &he) && he.Status == 403: // Missing Access: it exists
		b.log.Info("a channel the bot may no longer view was announced deleted; kept, and caught up once the bot may read it again", "channel", d.ch)
		b.accessMu.Lock()
		b.noAccess[d.ch] = true
		b.accessMu.Unlock()
		// Its access may be back already (a CHANNEL_CREATE before this
		// answer found noAccess unset).
		b.recheckAccess(d.g)
	case err == nil:
		// There, and the bot views it (again): it missed the events of
		// the meantime, and so did its threads. The server's catch-up,
		// as for a 403, not the channel's alone: a thread refused 403
		// meanwhile (noAccess, cleared by the recheck once readable) and
		// one started and archived while hidden are known only from the
		// server's listings. The catch-up queues no deletion, so this
		// cannot loop.
		b.log.Info("a channel announced deleted is still there; catching up the server", "channel", d.ch, "guild", d.g)
		if _, err := b.state.Cabinet.Channel(d.ch); err != nil {
			b.state.Cabinet.ChannelSet(c, false) // the state dropped it
		}
		b.recheckAccess(d.g)
		b.queueBackfill(d.g)
	default:
		wait := min(b.cfg.RetryAfter<<min(d.attempt, 20), maxRetryWait)
		b.log.Warn("cannot ask Discord whether a channel was deleted; kept, asking again later", "channel", d.ch, "retry_in", wait, "err", err)
		d.attempt++
		time.AfterFunc(wait, func() {
			if ctx.Err() == nil {
				b.queueDeletion(d)
			}
		})
	}
}

// unknownChannel: Discord says the channel does not exist (404 with code
// 10003, Unknown Channel). A bare 404 (a proxy's, a route's) proves
// nothing, and forgetting a channel that exists loses its history for good.
func unknownChannel(err error) bool {
	var he *httputil.HTTPError
	return errors.As(err, &he) && he.Status == 404 && he.Code == 10003
}

// notInGuild: Discord says the bot is no longer in the guild (403 Missing
// Access, 50001) or the guild is gone (404 Unknown Guild, 10004); a bare
// 403 or 404 proves nothing, as for unknownChannel.
func notInGuild(err error) bool {
	var he *httputil.HTTPError
	return errors.As(err, &he) && (he.Status == 403 && he.Code == 50001 || he.Status == 404 && he.Code == 10004)
}

// forgetChannel makes searchd forget a deleted channel or thread (a
// channel with its threads).
func (b *Bot) forgetChannel(g discord.GuildID, ch discord.ChannelID) {
	b.marks.forget(ch)
	b.batch.forget([]api.ID{api.ID(ch)}, nil)
	b.noteStatus(b.status.forget(api.ID(ch)))
	b.accessMu.Lock()
	delete(b.noAccess, ch)
	b.accessMu.Unlock()
}
