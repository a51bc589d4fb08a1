package bot

import (
	"context"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// checkGeneration, before each batch searchd is sent, asks searchd which
// database it serves (api.Health's generation, which `searchd restore`
// changes). The marks say what searchd holds; after a restore from an
// older backup it holds less, and nothing else would tell: the channels
// stay whole, live messages move the marks on, the spool delivers what it
// held just below them, and no catch-up ever goes back below the hole.
// So, before anything more is stored, each mark is taken back to the
// newest message searchd holds at or before it, with a gap, and every
// server is caught up from there.
func (b *Bot) checkGeneration(ctx context.Context) {
	if b.marks == nil || b.marks.path == "" {
		return // a full reconciliation: the running bot's marks are not its own
	}
	b.generationMu.Lock()
	defer b.generationMu.Unlock()
	h, err := b.searchd.Health(ctx)
	if err != nil || h.Generation == "" {
		return // the post says what is wrong; an older searchd has none
	}
	known := b.marks.searchdGeneration()
	if known == h.Generation {
		return
	}
	if known != "" {
		lowered := 0
		for ch, mark := range b.marks.all() {
			if mark == 0 {
				continue
			}
			cp, err := b.searchd.BackfillThrough(ctx, api.ID(ch), api.ID(mark))
			if err != nil {
				return // asked again before the next post
			}
			if newest := discord.MessageID(cp.Newest); newest < mark {
				b.marks.lower(ch, newest)
				lowered++
			}
		}
		b.log.Warn("searchd's database was replaced (a restore?); catching up every server from what it holds", "channels_behind", lowered)
		if lowered > 0 {
			if guilds, err := b.state.Guilds(); err == nil {
				for _, g := range guilds {
					if b.allowed(g.ID) {
						b.queueBackfill(g.ID)
					}
				}
			}
		}
	}
	b.marks.setGeneration(h.Generation)
	if err := b.marks.save(); err != nil {
		b.log.Warn("cannot save the sync marks; the next start fetches a little again", "err", err)
	}
}
