package bot

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// pages remembers what a "More" button continues. Discord's custom IDs
// hold 100 characters, too few for a cursor, so the button carries a
// random key instead. Interaction tokens die after 15 minutes, and so do
// these.
type pages struct {
	mu    sync.Mutex
	byKey map[string]*page
}

// page is one answer's state between button presses. Its channel list
// is what the first page searched; every later page recomputes it from
// the member as the button press shows them, and stops if it changed.
type page struct {
	asker   discord.UserID
	request api.QueryRequest // the question and filters; Cursor is the next page
	picked  discord.ChannelID
	// public: the answer is posted in here, for all its readers.
	public  bool
	here    discord.ChannelID
	expires time.Time
}

const pageLifetime = 15 * time.Minute

func newPages() *pages { return &pages{byKey: map[string]*page{}} }

func (p *pages) put(pg *page) string {
	b := make([]byte, 12)
	rand.Read(b)
	key := hex.EncodeToString(b)
	now := time.Now()
	pg.expires = now.Add(pageLifetime)
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, old := range p.byKey {
		if now.After(old.expires) {
			delete(p.byKey, k)
		}
	}
	p.byKey[key] = pg
	return key
}

func (p *pages) get(key string) *page {
	p.mu.Lock()
	defer p.mu.Unlock()
	pg := p.byKey[key]
	if pg == nil || time.Now().After(pg.expires) {
		return nil
	}
	return pg
}
