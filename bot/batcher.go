package bot

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/spool"
	"dsearch/shared/api"
)

// batcher gathers live events into small batches and hands them to the
// spool: one every flushEvery, or sooner when maxItems are waiting.
type batcher struct {
	put        func(*api.MessageBatch) error // the spool's Put
	log        *slog.Logger
	maxItems   int
	flushEvery time.Duration
	// marks learn of each live message the spool took.
	marks *marks
	// lost is told which channels lost messages the spool could not take
	// (full, or a disk error), so a catch-up fetches them again.
	lost func(channels map[discord.ChannelID]discord.GuildID, refused int, err error)
	// unsynced is told of live messages in channels never caught up.
	unsynced func(channels map[discord.ChannelID]discord.GuildID)

	mu      sync.Mutex
	pending api.MessageBatch
	at      map[api.ID]int // message ID → index in pending.Messages
	// kept counts the items of pending the spool refused before: they
	// wait for it, and do not make a flush due (flushIfFull), nor, alone,
	// try the spool again before retryAt.
	kept    int
	retryAt time.Time
}

// keptRetry is how often what the spool refused is tried again when
// nothing new came: each refusal is a warning and a catch-up.
const keptRetry = 10 * time.Second

// maxKeptEdits bounds the edits kept in memory while the spool refuses
// them; past it the oldest go, and only their channels' catch-up (the
// latest page before the mark) brings their text back.
const maxKeptEdits = 1000

func (b *batcher) items() int { return b.pending.Items() }

// message adds a new or edited message. Of two versions of one message
// waiting together (searchd refuses a batch naming a message twice) the
// later edit stays, whatever order they arrived in: an update can come
// before its create.
func (b *batcher) message(u api.MessageUpsert) {
	b.mu.Lock()
	if i, ok := b.at[u.ID]; ok {
		if p := &b.pending.Messages[i]; editedBefore(&u, p) {
			*p = later(u, *p)
		} else {
			*p = later(*p, u)
		}
	} else {
		if b.at == nil {
			b.at = map[api.ID]int{}
		}
		b.at[u.ID] = len(b.pending.Messages)
		b.pending.Messages = append(b.pending.Messages, u)
	}
	b.mu.Unlock()
	b.flushIfFull()
}

// editedBefore reports whether a is an older version of the message than
// b: a message never edited is older than any edit.
func editedBefore(a, b *api.MessageUpsert) bool {
	switch {
	case b.EditedAt == nil:
		return false
	case a.EditedAt == nil:
		return true
	}
	return a.EditedAt.Before(*b.EditedAt)
}

func (b *batcher) deletes(ids ...api.ID) {
	b.mu.Lock()
	for _, id := range ids {
		if !slices.Contains(b.pending.Deletes, id) {
			b.pending.Deletes = append(b.pending.Deletes, id)
		}
	}
	b.mu.Unlock()
	b.flushIfFull()
}

func (b *batcher) places(guilds []api.Guild, channels []api.Channel) {
	b.mu.Lock()
	b.pending.Guilds = append(b.pending.Guilds, guilds...)
	b.pending.Channels = append(b.pending.Channels, channels...)
	b.mu.Unlock()
	b.flushIfFull()
}

func (b *batcher) flushIfFull() {
	b.mu.Lock()
	full := b.items()-b.kept >= b.maxItems
	b.mu.Unlock()
	if full {
		b.flush()
	}
}

// forget asks searchd to forget deleted channels (with their threads)
// and the guilds the bot was removed from.
func (b *batcher) forget(channels, guilds []api.ID) {
	b.mu.Lock()
	b.pending.ForgetChannels = append(b.pending.ForgetChannels, channels...)
	b.pending.ForgetGuilds = append(b.pending.ForgetGuilds, guilds...)
	b.mu.Unlock()
	b.flush() // at once: what was deleted must stop being served
}

// flush writes what is waiting to the spool, in pieces searchd accepts.
// A piece the spool cannot take (full, or a disk error) is not lost for
// good: its removals are put again alone (a full spool takes them past its
// bound), and wait in memory for the next flush if even that fails; its
// edits wait in memory too (a catch-up reconciles only its channel's
// latest page before the mark, and an edit may take text out of an older
// message); and the channels of its messages are caught up from Discord.
func (b *batcher) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.items() == 0 || b.items() == b.kept && time.Now().Before(b.retryAt) {
		return
	}
	var kept api.MessageBatch
	forgot := map[api.ID]bool{} // channels and guilds whose forget the spool took
	took := func(removals *api.MessageBatch) {
		for _, id := range append(slices.Clone(removals.ForgetChannels), removals.ForgetGuilds...) {
			forgot[id] = true
		}
	}
	lost, unsynced := map[discord.ChannelID]discord.GuildID{}, map[discord.ChannelID]discord.GuildID{}
	refused := 0
	var lastErr error
	for _, part := range spool.Split(&b.pending, api.MaxBatchItems) {
		if err := b.put(part); err != nil {
			lastErr = err
			refused += part.Items()
			for _, m := range part.Messages {
				lost[discord.ChannelID(m.ChannelID)] = discord.GuildID(m.GuildID)
				// At once: a later part the spool takes must not move the
				// channel's mark past this one's messages.
				b.marks.gap(discord.ChannelID(m.ChannelID))
				if m.EditedAt != nil {
					kept.Messages = append(kept.Messages, m)
				}
			}
			removals := &api.MessageBatch{Deletes: part.Deletes, ForgetChannels: part.ForgetChannels, ForgetGuilds: part.ForgetGuilds}
			if removals.Items() > 0 && (len(part.Messages) > 0 || len(part.Guilds) > 0 || len(part.Channels) > 0) && b.put(removals) == nil {
				took(removals)
				continue
			}
			kept.Deletes = append(kept.Deletes, part.Deletes...)
			kept.ForgetChannels = append(kept.ForgetChannels, part.ForgetChannels...)
			kept.ForgetGuilds = append(kept.ForgetGuilds, part.ForgetGuilds...)
			continue
		}
		took(part)
		for _, m := range part.Messages {
			if b.marks.spooled(discord.ChannelID(m.ChannelID), discord.MessageID(m.ID)) {
				unsynced[discord.ChannelID(m.ChannelID)] = discord.GuildID(m.GuildID)
			}
		}
	}
	if len(unsynced) > 0 && b.unsynced != nil {
		b.unsynced(unsynced)
	}
	if lastErr != nil {
		what := "cannot write to the spool"
		if errors.Is(lastErr, spool.ErrFull) {
			what = "spool full while searchd is away"
		}
		b.log.Warn(what+"; the messages are fetched again from Discord once it can, deletions and edits it refused wait in memory",
			"events", refused, "channels", len(lost), "deletions_waiting", len(kept.Deletes), "err", lastErr)
		if b.lost != nil {
			b.lost(lost, refused, lastErr)
		}
		b.retryAt = time.Now().Add(keptRetry)
	} else if err := b.marks.save(); err != nil {
		b.log.Warn("cannot save the sync marks; the next start fetches a little again", "err", err)
	}
	// An edit kept for later must not bring back a channel or server
	// forgotten after it; and the oldest go past the bound.
	kept.Messages = slices.DeleteFunc(kept.Messages, func(m api.MessageUpsert) bool { return forgot[m.ChannelID] || forgot[m.GuildID] })
	if over := len(kept.Messages) - maxKeptEdits; over > 0 {
		b.log.Warn("too many edits waiting for the spool; the oldest are left to their channels' catch-up", "dropped", over)
		kept.Messages = kept.Messages[over:]
	}
	b.pending, b.at, b.kept = kept, nil, kept.Items()
	for i, m := range kept.Messages {
		if b.at == nil {
			b.at = map[api.ID]int{}
		}
		b.at[m.ID] = i
	}
}

// run flushes on a timer until ctx ends, then once more.
func (b *batcher) run(ctx context.Context) {
	t := time.NewTicker(b.flushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			b.mu.Lock()
			b.retryAt = time.Time{} // the last chance for what was refused
			b.mu.Unlock()
			b.flush()
			return
		case <-t.C:
			b.flush()
		}
	}
}
