package bot

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/utils/httputil"

	"dsearch/bot/spool"
	"dsearch/shared/api"
)

// How a channel is synced (docs/bot.md, "Catch-up and reconciliation"):
//
//  1. Catch-up from the channel's high-water mark (marks.go): first the
//     page of up to 100 messages before the mark is fetched again, then
//     every page after it. Each page is reconciled: searchd gets every
//     message (an edit wins by its edit time) and forgets the stored
//     messages of the page's span that Discord no longer has.
//  2. History: pages back from searchd's backfill checkpoint, each
//     reconciled the same way, until the channel's first message.
//
// Every channel of a guild is caught up before any history is paged, so
// one long history does not hold back the others' catch-up.

// retry is a channel to sync again after Discord failed on it.
type retry struct {
	ch      discord.Channel
	attempt int
}

// maxRetryWait bounds the pause before a failed channel is tried again.
const maxRetryWait = 30 * time.Minute

// errYield stops a history pass so that a catch-up waiting goes first;
// the history resumes from its checkpoint.
var errYield = errors.New("history paused for a catch-up")

// syncChannels catches up every channel, then pages through their
// history. A channel Discord failed on is tried again later.
func (b *Bot) syncChannels(ctx context.Context, chans []discord.Channel, attempt int) {
	b.syncing.start(chans)
	if b.spooledFirst(ctx); ctx.Err() != nil {
		return
	}
	failed := map[discord.ChannelID]error{}
	for _, ch := range chans {
		if err := b.catchUp(ctx, ch); err != nil {
			failed[ch.ID] = err
		}
		if ctx.Err() != nil {
			return
		}
	}
	yielded := false
	paged := map[discord.ChannelID]bool{} // history paged to its end before a yield
	for i, ch := range chans {
		if failed[ch.ID] != nil || !b.cfg.Backfill {
			continue
		}
		n, err := b.history(ctx, ch)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errYield):
			// Come back to these channels once the catch-up is done.
			for _, rest := range chans[i:] {
				if failed[rest.ID] == nil {
					b.scheduleRetry(ctx, retry{rest, attempt}, 0)
				}
			}
			yielded = true
		case err != nil:
			failed[ch.ID] = err
		default:
			paged[ch.ID] = true
			if n > 0 {
				b.log.Info("backfill: channel done", "guild", ch.GuildID, "channel", ch.ID, "messages", n, "progress", i+1, "of", len(chans))
			}
		}
		if yielded {
			break
		}
	}
	for _, ch := range chans {
		err := failed[ch.ID]
		if err == nil {
			// A yield sends back only the channels not paged yet: those
			// paged are synced, and stay noted as syncing otherwise.
			if !yielded || paged[ch.ID] {
				b.syncing.done(ch.ID)
				b.noteStatus(b.status.complete(ch.ID))
			}
			continue
		}
		b.channelFailed(ctx, ch, err, attempt)
	}
}

// channelFailed reports a channel Discord failed on and, unless retrying
// cannot help, tries it again after a pause that doubles each time.
func (b *Bot) channelFailed(ctx context.Context, ch discord.Channel, err error, attempt int) {
	var he *httputil.HTTPError
	if !retrying(err) {
		b.syncing.done(ch.ID) // not synced by trying again: the status file says why
	}
	switch {
	case unknownChannel(err):
		// Deleted, whether or not an event says so (none comes for a
		// deleted channel's threads, nor of an unavailable guild).
		b.state.Cabinet.ChannelRemove(&ch)
		b.forgetChannel(ch.GuildID, ch.ID)
		return
	case errors.As(err, &he) && he.Status == 404:
		b.noteStatus(b.status.forget(api.ID(ch.ID)))
		return
	case errors.As(err, &he) && he.Status == 403:
		b.log.Warn("backfill: channel skipped", "channel", ch.ID, "err", discordErr(err))
		b.noteStatus(b.status.incomplete(ch, discordErr(err).Error(), false))
		return
	case errors.Is(err, errNoHistory):
		b.log.Warn("backfill: channel skipped", "channel", ch.ID, "err", err)
		b.noteStatus(b.status.incomplete(ch, err.Error(), false))
		return
	}
	wait := min(b.cfg.RetryAfter<<min(attempt, 20), maxRetryWait)
	b.log.Warn("backfill: channel failed; trying again later", "channel", ch.ID, "retry_in", wait, "err", err)
	b.noteStatus(b.status.incomplete(ch, err.Error(), true))
	b.scheduleRetry(ctx, retry{ch, attempt + 1}, wait)
}

// retrying is whether channelFailed tries a channel again after err.
func retrying(err error) bool {
	var he *httputil.HTTPError
	return !unknownChannel(err) && !(errors.As(err, &he) && (he.Status == 404 || he.Status == 403)) && !errors.Is(err, errNoHistory)
}

func (b *Bot) scheduleRetry(ctx context.Context, r retry, wait time.Duration) {
	time.AfterFunc(wait, func() {
		select {
		case b.retryQueue <- r:
		case <-ctx.Done():
		}
	})
}

func (b *Bot) noteStatus(err error) {
	if err != nil {
		b.log.Warn("cannot write the bot status file", "err", err)
	}
}

// catchUp fetches what a channel got since its high-water mark and
// reconciles the page before it; a channel never synced starts with its
// newest page. The channel is whole again (live messages move its mark)
// if nothing was lost meanwhile.
func (b *Bot) catchUp(ctx context.Context, ch discord.Channel) error {
	c := b.marks.begin(ch.ID)
	from, known := b.marks.mark(ch.ID)
	cp, err := retryFunc(ctx, b, func() (*api.Backfill, error) {
		if known && from != 0 {
			// searchd's newest at or before the mark: a live message
			// stored since (the spool is delivered by now) must not hide
			// a restore's hole below the mark.
			return b.searchd.BackfillThrough(ctx, api.ID(ch.ID), api.ID(from))
		}
		return b.searchd.Backfill(ctx, api.ID(ch.ID))
	})
	if err != nil {
		return err
	}
	switch {
	case !known && (cp.Complete || cp.Before != 0):
		// Synced, its mark not saved (an upgrade from before marks, a
		// crash or a failed save): the newest stored message is all
		// there is to go on; with none stored (the channel was empty),
		// the checkpoint, or the channel's start once it is complete.
		// The newest page alone would leave a hole its history pass,
		// already past it, never fills. A channel stored otherwise (an
		// import) starts with its newest page, and its history pass
		// covers what lies between.
		from, known = discord.MessageID(cp.Newest), true
		if from == 0 && !cp.Complete {
			from = discord.MessageID(cp.Before)
		}
	case known && cp.Newest == 0 && !cp.Complete && cp.Before == 0:
		// searchd holds nothing of a channel the bot synced: restored
		// from a backup older than it. Synced anew, history included.
		known = false
	case known && cp.Newest != 0 && discord.MessageID(cp.Newest) < from:
		// searchd's newest up to the mark is older than the mark:
		// restored from a backup (or the mark's message deleted, the
		// bot's own, or an opted-out member's). From the mark, what came
		// between would be lost for good; from searchd's newest it is
		// fetched again, harmlessly.
		from = discord.MessageID(cp.Newest)
	}
	rest := b.state.WithContext(ctx)
	if !known {
		// Never synced: the newest page sets the mark, and the history
		// goes on from its oldest message.
		msgs, err := rest.MessagesBefore(ch.ID, 0, pageSize)
		if err != nil {
			return err
		}
		if err := b.reconcile(ctx, ch, msgs, len(msgs) < pageSize, 0); err != nil {
			return err
		}
		newest := discord.MessageID(0)
		if len(msgs) > 0 {
			newest = msgs[0].ID
		}
		b.marks.fetched(c, newest)
		if cp.Before == 0 && !cp.Complete {
			cp.Complete = len(msgs) < pageSize
			if len(msgs) > 0 {
				cp.Before = api.ID(msgs[len(msgs)-1].ID)
			}
			if _, err := retryFunc(ctx, b, func() (*api.Backfill, error) { return cp, b.searchd.SetBackfill(ctx, cp) }); err != nil {
				return err
			}
		}
	} else {
		// The page before the mark: edits and deletions made there while
		// the bot was away.
		if from != 0 {
			msgs, err := rest.MessagesBefore(ch.ID, from+1, pageSize)
			if err != nil {
				return err
			}
			if err := b.reconcile(ctx, ch, msgs, len(msgs) < pageSize, from); err != nil {
				return err
			}
		}
		for after := from; ; {
			msgs, err := rest.MessagesAfter(ch.ID, after, pageSize) // newest first
			if err != nil {
				return err
			}
			if len(msgs) == 0 {
				break
			}
			if err := b.reconcileAfter(ctx, ch, msgs, after); err != nil {
				return err
			}
			after = msgs[0].ID
			b.marks.fetched(c, after)
			if len(msgs) < pageSize {
				break
			}
		}
	}
	if !b.marks.finish(c) {
		b.log.Info("backfill: the channel lost events during its catch-up; catching up again", "channel", ch.ID)
		b.markLost(map[discord.ChannelID]discord.GuildID{ch.ID: ch.GuildID})
	}
	if err := b.marks.save(); err != nil {
		b.log.Warn("cannot save the sync marks; the next start fetches a little again", "err", err)
	}
	return nil
}

// history pages back from searchd's checkpoint, a page at a time, saving
// the checkpoint after each page. It returns how many messages it sent,
// and errYield when a catch-up waits.
//
// Each checkpoint saved names the database generation it was read from:
// after a restore the pass's place, kept here, is not the restored
// database's, which lacks the pages between its own checkpoint and that
// place; saved there, it would say they were done. searchd refuses it,
// and the pass yields, to resume from the restored checkpoint.
func (b *Bot) history(ctx context.Context, ch discord.Channel) (int, error) {
	// Waited for as the checkpoint is: searchd away is no failure of the
	// channel's.
	g, err := retryFunc(ctx, b, func() (string, error) { return b.checkGeneration(ctx) })
	if err != nil {
		return 0, err
	}
	cp, err := retryFunc(ctx, b, func() (*api.Backfill, error) { return b.searchd.Backfill(ctx, api.ID(ch.ID)) })
	if err != nil {
		return 0, err
	}
	rest := b.state.WithContext(ctx)
	sent := 0
	before := discord.MessageID(cp.Before)
	for !cp.Complete {
		if b.catchUpWaiting() {
			return sent, errYield
		}
		msgs, err := rest.MessagesBefore(ch.ID, before, pageSize) // newest first
		if err != nil {
			return sent, err
		}
		upTo := discord.MessageID(0) // the newest page: up to its newest message
		if before != 0 {
			upTo = before - 1
		}
		if err := b.reconcile(ctx, ch, msgs, len(msgs) < pageSize, upTo); err != nil {
			return sent, err
		}
		sent += len(msgs)
		if len(msgs) > 0 {
			before = msgs[len(msgs)-1].ID
		}
		cp.Before, cp.Complete = api.ID(before), len(msgs) < pageSize
		_, err = retryFunc(ctx, b, func() (*api.Backfill, error) { return cp, b.searchd.SetBackfillIn(ctx, g, cp) })
		if api.StaleGeneration(err) {
			b.log.Warn("backfill: searchd's database was replaced during a history pass; resuming from its checkpoint", "channel", ch.ID)
			return sent, errYield
		}
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// catchUpWaiting reports whether a catch-up is queued.
func (b *Bot) catchUpWaiting() bool {
	b.queueMu.Lock()
	defer b.queueMu.Unlock()
	return len(b.guildQueue) > 0 || len(b.gapped) > 0
}

// reconcile makes searchd match a page Discord returned for "before"
// (newest first): every message of it is sent, and the stored messages
// Discord no longer has are deleted, from the page's oldest message (the
// channel's start when fromStart) to upTo (0: the page's newest; no
// later message is known to be missing).
func (b *Bot) reconcile(ctx context.Context, ch discord.Channel, msgs []discord.Message, fromStart bool, upTo discord.MessageID) error {
	if !b.botReadsHistory(ch) {
		// Discord answers an empty page, not 403, to a bot that may view
		// a channel but not read its history: taken at its word, it would
		// delete every stored message of the channel, for good.
		return errNoHistory
	}
	from := discord.MessageID(1)
	if !fromStart && len(msgs) > 0 {
		from = msgs[len(msgs)-1].ID
	}
	if upTo == 0 {
		if len(msgs) == 0 {
			return nil
		}
		upTo = msgs[0].ID
	}
	if !fromStart && len(msgs) == 0 {
		return nil
	}
	return b.sendReconciled(ctx, ch, msgs, from, upTo)
}

// errNoHistory: the bot may not read a channel's history (Read Message
// History, or View Channel, taken away), so a page of it says nothing of
// what was deleted there.
var errNoHistory = errors.New("the bot may not read this channel's history (View Channel and Read Message History); its stored messages are kept as they are")

// botReadsHistory reports whether the bot may read ch's past messages now
// (a thread: its parent's), by the gateway's state of the channel, its
// roles and the bot's member; true when the state cannot tell, as Discord
// then answers for itself (403).
func (b *Bot) botReadsHistory(ch discord.Channel) bool {
	c, err := b.state.Channel(ch.ID) // ch may be a retry's old copy
	if err != nil {
		return true
	}
	reads := b.botReader(c.GuildID, nil)
	return reads == nil || reads(*c)
}

// botReader tells, for the channels of guild g, whether the bot may read
// their past messages now (a thread: its parent's; true for a thread whose
// parent the state lacks, as Discord answers for itself), from one read of
// the gateway's state; nil when the state cannot tell. member is the
// bot's (nil: asked of Discord).
func (b *Bot) botReader(g discord.GuildID, member *discord.Member) func(discord.Channel) bool {
	if member == nil {
		var err error
		if member, err = b.ownMember(g); err != nil {
			return nil
		}
	}
	guild, roles, chans, err := b.guildState(g)
	if err != nil {
		return nil
	}
	byID := make(map[discord.ChannelID]*discord.Channel, len(chans))
	for i := range chans {
		byID[chans[i].ID] = &chans[i]
	}
	return func(c discord.Channel) bool {
		if isThread(c.Type) {
			parent, ok := byID[c.ParentID]
			if !ok {
				return true
			}
			c = *parent
		}
		return mayRead(guild, &c, member, roles)
	}
}

// reconcileAfter is reconcile for a page Discord returned for "after"
// (newest first): its span is from after to its newest message.
func (b *Bot) reconcileAfter(ctx context.Context, ch discord.Channel, msgs []discord.Message, after discord.MessageID) error {
	return b.sendReconciled(ctx, ch, msgs, after+1, msgs[0].ID)
}

// sendReconciled sends a page with the deletions of the stored messages
// from..upTo that it lacks, straight to searchd (a checkpoint or mark
// that follows must not run ahead of them). searchd keeps the newest edit
// of a message, and never brings back a deleted one, so a page racing
// live events cannot undo them.
func (b *Bot) sendReconciled(ctx context.Context, ch discord.Channel, msgs []discord.Message, from, upTo discord.MessageID) error {
	batch := &api.MessageBatch{Messages: make([]api.MessageUpsert, 0, len(msgs))}
	onDiscord := map[api.ID]bool{}
	me, _ := b.state.Me()
	for i := range msgs {
		if msgs[i].GuildID == 0 {
			msgs[i].GuildID = ch.GuildID // REST pages leave it out
		}
		onDiscord[api.ID(msgs[i].ID)] = true
		if !msgs[i].Author.ID.IsValid() || me != nil && msgs[i].Author.ID == me.ID {
			continue // our own answers echo other messages (Bot.message)
		}
		batch.Messages = append(batch.Messages, upsert(&msgs[i], nil))
	}
	for lo := api.ID(from); lo <= api.ID(upTo); {
		stored, err := retryFunc(ctx, b, func() (*api.MessageIDs, error) {
			return b.searchd.MessageIDs(ctx, api.ID(ch.ID), lo, api.ID(upTo))
		})
		if err != nil {
			return err
		}
		for _, id := range stored.IDs {
			if !onDiscord[id] {
				batch.Deletes = append(batch.Deletes, id)
			}
		}
		if !stored.More || len(stored.IDs) == 0 {
			break
		}
		lo = stored.IDs[len(stored.IDs)-1] + 1
	}
	if len(batch.Deletes) > 0 {
		if err := b.confirmDeleted(ctx, ch.ID, batch.Deletes); err != nil {
			return err
		}
		b.log.Info("reconcile: messages deleted on Discord", "channel", ch.ID, "count", len(batch.Deletes))
	}
	for _, part := range spool.Split(batch, api.MaxBatchItems) {
		// What it removed leaves SPOOL/rejected/ and withdraws the
		// public answers quoting it (Bot.took).
		if err := b.postPage(ctx, part); err != nil {
			return err
		}
	}
	return nil
}

// postPage sends part of a page straight to searchd, waiting while
// searchd is away. A part searchd refuses, as bad or for long (a 500 it
// answers every time, while it takes other batches), would hold the
// channel's catch-up, and every one queued behind it, for good: it is
// offered again in halves and what searchd refuses alone is kept in
// SPOOL/rejected/ (spool.SetAsideRefused), as the spool does.
func (b *Bot) postPage(ctx context.Context, part *api.MessageBatch) error {
	if b.spool == nil { // --reconcile: the bot's spool is not its own; a refused page is an error
		_, err := retryFunc(ctx, b, func() (*api.BatchResult, error) { return b.searchd.PostMessages(ctx, part) })
		return err
	}
	send := func(ctx context.Context, mb *api.MessageBatch) error {
		_, err := b.searchd.PostMessages(ctx, mb)
		return err
	}
	// What searchd removes meanwhile must not stay in what is set aside.
	done, aside := b.watchRemovals(), false
	defer func() { done(aside) }()
	wait, refusals, since, took := 500*time.Millisecond, 0, time.Time{}, uint64(0)
	for {
		err := send(ctx, part)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case api.BadBatch(err):
			if aside = b.spool.SetAsideRefused(ctx, part, send, err, true); aside {
				return nil
			}
		case errors.As(err, new(*api.Error)):
			if refusals == 0 {
				since, took = time.Now(), b.taken.Load()
			}
			refusals++
			if aside = b.spool.SetAsideDue(refusals, since) && b.spool.SetAsideRefused(ctx, part, send, err, b.taken.Load() != took); aside {
				return nil
			}
		}
		b.log.Warn("backfill: searchd did not take a page; waiting", "retry_in", wait, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// spoolLost is the batcher telling that the spool could not take some
// channels' messages (refused events in all): each such channel has a gap
// until a catch-up.
func (b *Bot) spoolLost(chans map[discord.ChannelID]discord.GuildID, refused int, cause error) {
	b.noteStatus(b.status.update(func(s *api.BotStatus) {
		now := time.Now().UTC()
		s.SpoolFailures += int64(refused)
		s.LastSpoolFailure, s.LastSpoolFailAt = Redact(cause.Error()), &now
	}))
	b.markLost(chans)
}

func (b *Bot) markLost(chans map[discord.ChannelID]discord.GuildID) {
	b.lostMu.Lock()
	for ch, g := range chans {
		b.marks.gap(ch)
		b.lost[ch] = g
	}
	b.lostMu.Unlock()
	select {
	case b.gapped <- struct{}{}:
	default:
	}
}

// catchUpUnsynced asks for the catch-up of a thread Discord just gave the
// bot (new, the bot added to it, or its parent readable again) that has
// no mark: no guild's catch-up listed it, and what it holds would wait
// for a live message there.
func (b *Bot) catchUpUnsynced(th *discord.Channel) {
	if b.allowed(th.GuildID) && b.marks.ask(th.ID) {
		b.markLost(map[discord.ChannelID]discord.GuildID{th.ID: th.GuildID})
	}
}

// catchUpRejoined: a THREAD_CREATE of a thread with a mark is the bot
// added back to a private thread it was removed from (Discord sent
// nothing of it meanwhile): it gets a gap and is caught up from its mark.
func (b *Bot) catchUpRejoined(th *discord.Channel) {
	if _, synced := b.marks.mark(th.ID); synced && b.allowed(th.GuildID) {
		b.marks.gap(th.ID)
		b.markLost(map[discord.ChannelID]discord.GuildID{th.ID: th.GuildID})
	}
}

// catchUpLost catches up the channels whose messages the spool could not
// take, and threads new to the bot without a mark (catchUpUnsynced), once
// the spool takes events again: once searchd has what it held
// (syncChannels waits for it).
func (b *Bot) catchUpLost(ctx context.Context) {
	b.lostMu.Lock()
	lost := b.lost
	b.lost = map[discord.ChannelID]discord.GuildID{}
	b.lostMu.Unlock()
	var chans []discord.Channel
	for _, id := range slices.Sorted(maps.Keys(lost)) {
		ch, err := b.state.Channel(id)
		if err != nil {
			ch = &discord.Channel{ID: id, GuildID: lost[id]}
		}
		if obfuscated(ch) {
			// Hidden from the bot since: Discord would answer 403, and the
			// status file would name it by its stand-in. Its gap stays;
			// recheckAccess catches the server up once the real channel
			// comes back.
			continue
		}
		chans = append(chans, *ch)
	}
	b.log.Info("catching up channels: the spool could not take their events, or threads new to the bot", "channels", len(chans))
	b.syncChannels(ctx, chans, 0)
	b.answers.recheck()
}

// queueBackfill asks for a guild to be caught up and paged through; a
// guild already waiting is not queued twice.
func (b *Bot) queueBackfill(g discord.GuildID) {
	b.queueMu.Lock()
	if !slices.Contains(b.guildQueue, g) {
		b.guildQueue = append(b.guildQueue, g)
	}
	b.queueMu.Unlock()
	select {
	case b.queued <- struct{}{}:
	default:
	}
}

func (b *Bot) nextGuild() (discord.GuildID, bool) {
	b.queueMu.Lock()
	defer b.queueMu.Unlock()
	if len(b.guildQueue) == 0 {
		return 0, false
	}
	g := b.guildQueue[0]
	b.guildQueue = b.guildQueue[1:]
	return g, true
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
		return fmt.Errorf("Discord refused (403): the bot lacks View Channel or Read Message History here")
	}
	return err
}
