package bot

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/spool"
	"dsearch/shared/api"
)

func TestBatcherKeepsTheLatestEdit(t *testing.T) {
	at := func(m int) *time.Time { t := time.Date(2025, 1, 1, 0, m, 0, 0, time.UTC); return &t }
	b := &batcher{maxItems: 100}
	b.message(api.MessageUpsert{ID: 1, Content: "edited", EditedAt: at(2)})
	b.message(api.MessageUpsert{ID: 1, Content: "original"})
	b.message(api.MessageUpsert{ID: 2, Content: "second edit", EditedAt: at(5)})
	b.message(api.MessageUpsert{ID: 2, Content: "first edit", EditedAt: at(3)})
	b.message(api.MessageUpsert{ID: 3, Content: "original"})
	b.message(api.MessageUpsert{ID: 3, Content: "edited", EditedAt: at(1)})
	got := map[api.ID]string{}
	for _, m := range b.pending.Messages {
		got[m.ID] = m.Content
	}
	want := map[api.ID]string{1: "edited", 2: "second edit", 3: "edited"}
	if len(b.pending.Messages) != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pending %v, want %v", got, want)
	}
}

// fullSpool is a spool that refuses messages (and places) and takes
// removals past its bound, as spool.Put does when full, until full is
// false; it keeps what it took.
type fullSpool struct {
	full  bool
	took  []*api.MessageBatch
	puts  int
	lost  int
	batch *batcher
}

func newFullSpool(t *testing.T) *fullSpool {
	mk, err := readMarks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fullSpool{full: true}
	f.batch = &batcher{maxItems: 100, log: slog.New(slog.DiscardHandler), marks: mk,
		lost: func(map[discord.ChannelID]discord.GuildID, int, error) { f.lost++ },
		put: func(x *api.MessageBatch) error {
			f.puts++
			if f.full && (len(x.Messages) > 0 || len(x.Channels) > 0 || len(x.Guilds) > 0) {
				return spool.ErrFull
			}
			c := *x
			f.took = append(f.took, &c)
			return nil
		}}
	return f
}

// An edit kept while the spool is full must not bring back the server it
// belongs to once that server is forgotten: the edit would come after
// the forget and be stored again.
func TestKeptEditGoesWithItsForgottenServer(t *testing.T) {
	f := newFullSpool(t)
	edited := time.Now()
	f.batch.message(api.MessageUpsert{ID: 7, GuildID: 9, ChannelID: 90, Content: "edited", EditedAt: &edited, CreatedAt: edited.Add(-time.Hour)})
	f.batch.flush()
	f.batch.forget(nil, []api.ID{9}) // the bot is removed from server 9
	f.full = false
	f.batch.mu.Lock()
	f.batch.retryAt = time.Time{}
	f.batch.mu.Unlock()
	f.batch.flush()
	forgot := false
	for _, x := range f.took {
		forgot = forgot || len(x.ForgetGuilds) > 0
		if forgot && len(x.Messages) > 0 {
			t.Errorf("a message of server 9 spooled after its forget: %+v", x.Messages)
		}
	}
	if !forgot {
		t.Error("the forget was never spooled")
	}
}

// Edits kept for a full spool do not make every live event a flush (each
// a warning, a status write and a catch-up), and alone are tried again
// only after a pause.
func TestKeptEditsDoNotFlushEveryEvent(t *testing.T) {
	f := newFullSpool(t)
	now := time.Now()
	for i := 1; i <= 100; i++ {
		f.batch.message(api.MessageUpsert{ID: api.ID(i), GuildID: 9, ChannelID: 90, EditedAt: &now, CreatedAt: now})
	}
	f.batch.flush()
	f.lost = 0
	for i := 1000; i < 1010; i++ {
		f.batch.message(api.MessageUpsert{ID: api.ID(i), GuildID: 9, ChannelID: 90, CreatedAt: now})
	}
	if f.lost != 0 {
		t.Errorf("10 new messages with 100 edits kept: %d refused flushes, want none before 100 new items", f.lost)
	}
	f.batch.flush() // the timer's: the new messages are tried, and refused
	f.lost = 0
	f.batch.flush() // the next tick: only kept edits, within the pause
	if f.lost != 0 {
		t.Errorf("kept edits alone tried again before the pause: %d", f.lost)
	}
}
