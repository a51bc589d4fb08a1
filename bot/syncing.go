package bot

import (
	"sync"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// syncing is the channels whose sync (catch-up and history) has begun
// in this run and not ended: an answer searching one of them may miss
// older messages, and says so (a member's first /query while the first
// backfill runs would otherwise read "nothing found"). A channel Discord
// keeps failing on stays here while it is retried; one the bot may not
// read leaves (the status file names it).
type syncing struct {
	mu      sync.Mutex
	pending map[discord.ChannelID]bool
}

func (s *syncing) start(chans []discord.Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[discord.ChannelID]bool{}
	}
	for _, ch := range chans {
		s.pending[ch.ID] = true
	}
}

func (s *syncing) done(ch discord.ChannelID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, ch)
}

// count is how many of channels are still being synced.
func (s *syncing) count(channels []api.ID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, id := range channels {
		if s.pending[discord.ChannelID(id)] {
			n++
		}
	}
	return n
}
