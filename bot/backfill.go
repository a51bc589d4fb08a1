package bot

import (
	"context"
	"errors"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/utils/httputil"

	"dsearch/shared/api"
)

// pageSize is Discord's most messages per request.
const pageSize = 100

// backfillLoop pages through guilds as they are queued, one at a time
// (Discord's rate limits make parallel paging no faster). After the spool
// overflowed, a catch-up pass fetches what was dropped.
func (b *Bot) backfillLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case g := <-b.backfillQueue:
			b.backfillGuild(ctx, g)
		case <-b.overflow:
			// Wait for searchd to take the spool back, then catch up.
			for b.spool.Len() > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
			}
			b.Backfill()
		}
	}
}

// backfillGuild pages through every channel and thread of a guild the bot
// can read.
func (b *Bot) backfillGuild(ctx context.Context, g discord.GuildID) {
	chans, err := b.readableByBot(g)
	if err != nil {
		b.log.Error("backfill: cannot list channels", "guild", g, "err", err)
		return
	}
	start := time.Now()
	total := 0
	for i, ch := range chans {
		n, err := b.backfillChannel(ctx, ch)
		total += n
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			b.log.Warn("backfill: channel skipped", "channel", ch.ID, "err", err)
		default:
			b.log.Info("backfill: channel done", "guild", g, "channel", ch.ID, "messages", n, "progress", i+1, "of", len(chans))
		}
	}
	b.log.Info("backfill: guild done", "guild", g, "channels", len(chans), "messages", total, "took", time.Since(start).Round(time.Second))
}

// readableByBot lists the guild's channels with messages, their active
// threads and their archived public threads that the bot may read.
func (b *Bot) readableByBot(g discord.GuildID) ([]discord.Channel, error) {
	me, err := b.state.Me()
	if err != nil {
		return nil, err
	}
	member, err := b.state.Member(g, me.ID)
	if err != nil {
		return nil, err
	}
	guild, roles, chans, err := b.guildState(g)
	if err != nil {
		return nil, err
	}
	byID := map[discord.ChannelID]discord.Channel{}
	for _, c := range chans {
		byID[c.ID] = c
	}
	can := func(c discord.Channel) bool {
		return channelPermissions(guild, &c, member, roles).Has(readPermissions)
	}
	var out []discord.Channel
	seen := map[discord.ChannelID]bool{}
	add := func(c discord.Channel) {
		if !seen[c.ID] {
			seen[c.ID] = true
			out = append(out, c)
		}
	}
	var parents []discord.Channel
	for _, c := range chans {
		if isThread(c.Type) || c.Type == discord.GuildCategory || !can(c) {
			continue
		}
		parents = append(parents, c)
		if holdsMessages(c.Type) {
			add(c)
		}
	}
	// Threads follow their parent's permissions.
	threadOK := func(t discord.Channel) bool {
		p, ok := byID[t.ParentID]
		return ok && can(p)
	}
	if active, err := b.state.ActiveThreads(g); err == nil {
		for _, t := range active.Threads {
			if threadOK(t) {
				add(t)
			}
		}
	} else {
		b.log.Warn("backfill: cannot list active threads", "guild", g, "err", err)
	}
	for _, p := range parents {
		if p.Type != discord.GuildText && p.Type != discord.GuildAnnouncement && p.Type != discord.GuildForum {
			continue
		}
		var before discord.Timestamp
		for {
			page, err := b.state.PublicArchivedThreads(p.ID, before, pageSize)
			if err != nil {
				b.log.Warn("backfill: cannot list archived threads", "channel", p.ID, "err", err)
				break
			}
			for _, t := range page.Threads {
				add(t)
				if t.ThreadMetadata != nil {
					before = t.ThreadMetadata.ArchiveTimestamp
				}
			}
			if !page.More || len(page.Threads) == 0 {
				break
			}
		}
	}
	// searchd learns the threads' names and parents before their messages.
	places := make([]api.Channel, len(out))
	for i := range out {
		places[i] = channel(&out[i])
	}
	b.batch.places(nil, places)
	return out, nil
}

// backfillChannel first catches up from the newest stored message (after
// downtime), then pages back through history from the checkpoint searchd
// keeps, a page at a time, saving the checkpoint after each page. It
// returns how many messages it sent.
func (b *Bot) backfillChannel(ctx context.Context, ch discord.Channel) (int, error) {
	cp, err := retryFunc(ctx, b, func() (*api.Backfill, error) { return b.searchd.Backfill(ctx, api.ID(ch.ID)) })
	if err != nil {
		return 0, err
	}
	rest := b.state.WithContext(ctx)
	sent := 0
	if cp.Newest != 0 {
		after := discord.MessageID(cp.Newest)
		for {
			msgs, err := rest.MessagesAfter(ch.ID, after, pageSize) // newest first
			if err != nil {
				return sent, discordErr(err)
			}
			if len(msgs) == 0 {
				break
			}
			if err := b.send(ctx, ch, msgs); err != nil {
				return sent, err
			}
			sent += len(msgs)
			after = msgs[0].ID
			if len(msgs) < pageSize {
				break
			}
		}
	}
	before := discord.MessageID(cp.Before)
	for !cp.Complete {
		msgs, err := rest.MessagesBefore(ch.ID, before, pageSize) // newest first
		if err != nil {
			return sent, discordErr(err)
		}
		if len(msgs) > 0 {
			if err := b.send(ctx, ch, msgs); err != nil {
				return sent, err
			}
			sent += len(msgs)
			before = msgs[len(msgs)-1].ID
		}
		cp.Before, cp.Complete = api.ID(before), len(msgs) < pageSize
		if _, err := retryFunc(ctx, b, func() (*api.Backfill, error) { return cp, b.searchd.SetBackfill(ctx, cp) }); err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// send posts a page of messages straight to searchd (the checkpoint that
// follows must not run ahead of them). searchd keeps the newest edit of a
// message, so a page racing a live edit cannot undo it.
func (b *Bot) send(ctx context.Context, ch discord.Channel, msgs []discord.Message) error {
	batch := &api.MessageBatch{Messages: make([]api.MessageUpsert, 0, len(msgs))}
	for i := range msgs {
		if msgs[i].GuildID == 0 {
			msgs[i].GuildID = ch.GuildID // REST pages leave it out
		}
		batch.Messages = append(batch.Messages, upsert(&msgs[i], nil))
	}
	_, err := retryFunc(ctx, b, func() (*api.BatchResult, error) { return b.searchd.PostMessages(ctx, batch) })
	return err
}

// retryFunc calls f until searchd answers, waiting longer each time; only a
// refusal or ctx ending stops it.
func retryFunc[T any](ctx context.Context, b *Bot, f func() (T, error)) (T, error) {
	wait := 500 * time.Millisecond
	for {
		v, err := f()
		var ae *api.Error
		if err == nil || errors.As(err, &ae) && ae.Status/100 == 4 {
			return v, err
		}
		b.log.Warn("backfill: searchd unavailable; waiting", "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// discordErr explains a Discord refusal; 403 means the bot lacks Read
// Message History there.
func discordErr(err error) error {
	var he *httputil.HTTPError
	if errors.As(err, &he) && he.Status == 403 {
		return errors.New("Discord refused: the bot lacks View Channel or Read Message History here")
	}
	return err
}
