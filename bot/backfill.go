package bot

import (
	"context"
	"fmt"
	"time"

	dapi "github.com/diamondburned/arikawa/v3/api"
	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/utils/httputil"

	"dsearch/shared/api"
)

// pageSize is Discord's most messages per request.
const pageSize = 100

// backfillLoop syncs channels one at a time (Discord's rate limits make
// parallel paging no faster): guilds as they are queued (on start and
// at each new gateway session), channels whose messages the spool could
// not take, and channels Discord failed on, again with a growing pause.
func (b *Bot) backfillLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.queued:
			for g, ok := b.nextGuild(); ok && ctx.Err() == nil; g, ok = b.nextGuild() {
				b.backfillGuild(ctx, g)
			}
		case <-b.gapped:
			b.catchUpLost(ctx)
		case present := <-b.present:
			if _, err := b.forgetLeftGuilds(ctx, present); err != nil {
				b.log.Warn("cannot look for servers the bot was removed from while away", "err", err)
			}
		case r := <-b.retryQueue:
			b.syncChannels(ctx, []discord.Channel{r.ch}, r.attempt)
		}
	}
}

// backfillGuild catches up and pages through every channel and thread of
// a guild the bot can read.
func (b *Bot) backfillGuild(ctx context.Context, g discord.GuildID) {
	chans, missed, err := b.readableByBot(g)
	if err != nil {
		// Listed again later, as a failed thread listing is: nothing
		// else would catch up what was written while the bot was away.
		b.log.Error("backfill: cannot list channels", "guild", g, "err", err)
		b.listAgain(ctx, g)
		return
	}
	// searchd is asked which channels it holds once it has what the
	// spool holds: a thread known only from a waiting batch would
	// otherwise be looked at by no one, and stored after, deleted.
	if b.spooledFirst(ctx); ctx.Err() != nil {
		return
	}
	if _, err := b.forgetVanished(ctx, g, chans); err != nil {
		b.log.Warn("backfill: cannot look for channels deleted while the bot was away", "guild", g, "err", err)
	}
	start := time.Now()
	b.syncChannels(ctx, chans, 0)
	if ctx.Err() != nil {
		return
	}
	b.log.Info("backfill: guild done", "guild", g, "channels", len(chans), "took", time.Since(start).Round(time.Second))
	b.answers.recheck() // what the catch-up, or another process meanwhile, removed
	b.threadListings(ctx, g, missed)
}

// spooledFirst waits until what the batcher and the spool held when it
// was called has reached searchd, however long that takes: the pages
// that follow go straight there. A page reconciles only the messages
// searchd holds, so a message spooled (a live post) and deleted on
// Discord while its deletion was missed (an outage) would be stored by
// the spool after the page had found nothing to delete, for good; and a
// page must not overtake the guild's placement (its GUILD_CREATE's),
// which takes a guild the bot was added back to off searchd's list of
// those it left (until then searchd stores nothing of it). A minute's
// cap let both through whenever searchd came back slower than that.
func (b *Bot) spooledFirst(ctx context.Context) {
	b.batch.flush()
	last := b.spool.Last()
	if b.spool.Delivered(last) {
		return
	}
	b.log.Info("backfill: waiting until searchd has what the spool holds", "batches", b.spool.Len())
	start, every := time.Now(), cmpOr(b.spoolStuckAfter, spoolStuckAfter)
	warnAt := every
	for !b.spool.Delivered(last) {
		if b.spoolWait != nil {
			b.spoolWait()
		}
		if waited := time.Since(start); waited >= warnAt {
			oldest, _ := b.spool.Oldest()
			b.log.Warn("backfill: a catch-up still waits for searchd to take the spool's batches; see the spool's warnings for why the oldest is not taken",
				"waited", waited.Round(time.Second), "oldest_batch", oldest, "up_to_batch", last, "batches", b.spool.Len())
			warnAt += every
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// spoolStuckAfter: a catch-up waiting this long for the spool says so,
// and again each time as long again. Searchd refusing one batch for good
// without saying it is bad (bad_batch) would stop the spool, and with it
// every catch-up, for good; an operator should see which batch.
const spoolStuckAfter = 10 * time.Minute

// threadListings reports the thread listings Discord failed on and lists
// the guild again after a pause that doubles each time, since nothing
// else would: a thread with a sync mark asks for no catch-up of its own.
func (b *Bot) threadListings(ctx context.Context, g discord.GuildID, missed []discord.Channel) {
	if len(missed) == 0 {
		b.queueMu.Lock()
		delete(b.listingAttempts, g)
		b.queueMu.Unlock()
		b.noteStatus(b.status.complete(activeThreadsEntry(g)))
		return
	}
	for _, m := range missed {
		b.noteStatus(b.status.incomplete(m, m.Topic, true))
	}
	b.log.Warn("backfill: thread listings failed; listing the server again later", "guild", g, "listings", len(missed))
	b.listAgain(ctx, g)
}

// listAgain queues guild g's catch-up again after a pause that doubles
// with each failed listing in a row (listingAttempts).
func (b *Bot) listAgain(ctx context.Context, g discord.GuildID) {
	b.queueMu.Lock()
	attempt := b.listingAttempts[g]
	b.listingAttempts[g] = attempt + 1
	b.queueMu.Unlock()
	wait := min(b.cfg.RetryAfter<<min(attempt, 20), maxRetryWait)
	time.AfterFunc(wait, func() {
		if ctx.Err() == nil {
			b.queueBackfill(g)
		}
	})
}

// readableByBot lists the guild's channels with messages, their active
// threads, their archived public threads and the archived private threads
// the bot joined, that the bot may read. missed
// says which thread listings Discord failed on (the threads they would
// have listed are left out), as entries for the status file: the server's
// active threads, or a channel's archived ones.
func (b *Bot) readableByBot(g discord.GuildID) (out, missed []discord.Channel, err error) {
	member, err := b.ownMember(g)
	if err != nil {
		return nil, nil, err
	}
	guild, roles, chans, err := b.guildState(g)
	if err != nil {
		return nil, nil, err
	}
	byID := map[discord.ChannelID]discord.Channel{}
	for _, c := range chans {
		byID[c.ID] = c
	}
	// The members' rule (Connect too for a voice or stage channel's text
	// chat): Discord answers 403 to the rest.
	can := func(c discord.Channel) bool { return mayRead(guild, &c, member, roles) }
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
		missed = append(missed, discord.Channel{ID: activeThreadsEntry(g), GuildID: g, Name: "(the server's active threads)",
			Topic: "cannot list the server's active threads: " + discordErr(err).Error()})
	}
	for _, p := range parents {
		if !holdsThreads(p.Type) {
			continue
		}
		err := b.archivedThreads(p.ID, add)
		if err == nil && p.Type == discord.GuildText {
			// Private threads exist only in text channels.
			err = b.joinedPrivateThreads(p.ID, add)
		}
		if err != nil {
			b.log.Warn("backfill: cannot list archived threads", "channel", p.ID, "err", err)
			m := p
			m.Topic = "cannot list its archived threads: " + discordErr(err).Error()
			missed = append(missed, m)
		}
	}
	// searchd learns the threads' names and parents before their messages.
	places := make([]api.Channel, len(out))
	for i := range out {
		places[i] = channel(&out[i])
	}
	b.batch.places(nil, places)
	return out, missed, nil
}

// archivedThreads calls add with each of a channel's archived public
// threads, newest archived first, page by page. Discord pages them by
// archive time: a page's threads were archived before the time given.
// arikawa's PublicArchivedThreads sends that time in whole seconds, so
// every thread archived in the same second as a page's last one, before
// it, was never listed. This sends it to the millisecond, as Discord keeps
// it, and a millisecond past the page's last thread, so threads archived
// at the same time come again (add sees each once); only when a whole
// page shares one millisecond does the next start before it.
func (b *Bot) archivedThreads(parent discord.ChannelID, add func(discord.Channel)) error {
	seen := map[discord.ChannelID]bool{}
	var before time.Time
	for {
		var at string
		if !before.IsZero() {
			at = before.UTC().Format(archiveTimeFormat)
		}
		page, err := b.threadPage(parent, "/threads/archived/public", at)
		if err != nil {
			return err
		}
		fresh := false
		var last time.Time
		for _, t := range page.Threads {
			if !seen[t.ID] {
				seen[t.ID], fresh = true, true
				add(t)
			}
			if t.ThreadMetadata != nil {
				last = t.ThreadMetadata.ArchiveTimestamp.Time()
			}
		}
		if !page.More || len(page.Threads) == 0 || last.IsZero() {
			return nil
		}
		next := last.Truncate(time.Millisecond).Add(time.Millisecond)
		if !fresh {
			// A whole page archived in one millisecond: on past it.
			if next = last.Truncate(time.Millisecond); !before.IsZero() && !next.Before(before) {
				return fmt.Errorf("the listing of archived threads does not move back in time (at %s)", before.Format(archiveTimeFormat))
			}
		}
		before = next
	}
}

// joinedPrivateThreads calls add with each of a text channel's archived
// private threads the bot joined, page by page. Discord lists archived
// private threads apart from public ones, and pages this listing by
// thread ID, newest first, not by archive time: a page's threads have
// IDs below the one given (arikawa's JoinedPrivateArchivedThreads sends a
// time).
func (b *Bot) joinedPrivateThreads(parent discord.ChannelID, add func(discord.Channel)) error {
	var before discord.ChannelID
	for {
		var id string
		if before.IsValid() {
			id = before.String()
		}
		page, err := b.threadPage(parent, "/users/@me/threads/archived/private", id)
		if err != nil {
			return err
		}
		for _, t := range page.Threads {
			add(t)
		}
		if !page.More || len(page.Threads) == 0 {
			return nil
		}
		last := page.Threads[len(page.Threads)-1].ID
		if before.IsValid() && last >= before {
			return fmt.Errorf("the listing of archived private threads does not move back (at %d)", before)
		}
		before = last
	}
}

// threadPage asks Discord for one page of a channel's archived threads at
// route, before the place given in the route's own terms (a time or an
// ID; "" for the first page).
func (b *Bot) threadPage(parent discord.ChannelID, route, before string) (*dapi.ArchivedThreads, error) {
	var param struct {
		Before string `schema:"before,omitempty"`
		Limit  uint   `schema:"limit"`
	}
	param.Before, param.Limit = before, pageSize
	var page *dapi.ArchivedThreads
	err := b.state.RequestJSON(&page, "GET", dapi.EndpointChannels+parent.String()+route, httputil.WithSchema(b.state.Client, param))
	return page, err
}

// archiveTimeFormat is ISO 8601 to the millisecond, as Discord's times.
const archiveTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// activeThreadsEntry is the status file's entry for a server's active
// threads, which no channel holds: the guild's ID, which Discord never
// gives a channel created since 2017 (the old default channel's had it,
// and that channel holds no threads).
func activeThreadsEntry(g discord.GuildID) discord.ChannelID { return discord.ChannelID(g) }
