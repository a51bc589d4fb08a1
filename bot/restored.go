package bot

import (
	"context"
	"fmt"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// checkGeneration, before the first batch searchd is sent and after one it
// refused for naming another database (watched), asks searchd which
// database it serves (api.Health's generation, which `searchd restore`
// changes). The marks say what searchd holds; after a restore from an
// older backup it holds less, and nothing else would tell: the channels
// stay whole, live messages move the marks on, the spool delivers what it
// held just below them, and no catch-up ever goes back below the hole.
// So, before anything more is stored, each mark is taken back to the
// newest message searchd holds at or before it, with a gap, and every
// server is caught up from there. An error holds the post back: what it
// stores in a restored database would hide the hole below the marks.
//
// It returns the generation checked, for the post to name (watched): a
// restore may still come between this check and the post, and searchd
// then refuses the batch. "" names none (no marks of its own, an older
// searchd).
// knownGeneration is the generation the marks hold for, "" when they know
// none or are not the bot's own (a full reconciliation).
func (b *Bot) knownGeneration() string {
	if b.marks == nil || b.marks.path == "" {
		return ""
	}
	return b.marks.searchdGeneration()
}

func (b *Bot) checkGeneration(ctx context.Context) (string, error) {
	if b.marks == nil || b.marks.path == "" {
		return "", nil // a full reconciliation: the running bot's marks are not its own
	}
	b.generationMu.Lock()
	defer b.generationMu.Unlock()
	h, err := b.searchd.Health(ctx)
	if err != nil {
		// Not an *api.Error: a refusal here is no refusal of the batch.
		return "", fmt.Errorf("cannot tell which database searchd serves: %v", err)
	}
	if h.Generation == "" {
		return "", nil // an older searchd has none
	}
	known := b.marks.searchdGeneration()
	if known == h.Generation {
		return known, nil
	}
	if known != "" {
		// Every channel asked before any mark is taken back: a check cut
		// short must not leave marks taken back that the next one, which
		// finds nothing more to take back, would not catch up.
		behind := map[discord.ChannelID]discord.MessageID{}
		for ch, mark := range b.marks.all() {
			if mark == 0 {
				continue
			}
			cp, err := b.searchd.BackfillThrough(ctx, api.ID(ch), api.ID(mark))
			if err != nil {
				return "", fmt.Errorf("cannot tell what the replaced database of searchd holds: %v", err)
			}
			if newest := discord.MessageID(cp.Newest); newest < mark {
				behind[ch] = newest
			}
		}
		for ch, newest := range behind {
			b.marks.lower(ch, newest)
		}
		b.log.Warn("searchd's database was replaced (a restore?); catching up every server from what it holds", "channels_behind", len(behind))
		if len(behind) > 0 {
			b.Backfill()
		}
	}
	b.marks.setGeneration(h.Generation)
	if err := b.marks.save(); err != nil {
		b.log.Warn("cannot save the sync marks; the next start fetches a little again", "err", err)
	}
	return h.Generation, nil
}
