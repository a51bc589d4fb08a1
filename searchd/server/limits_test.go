package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"dsearch/shared/api"
)

// The API keeps texts over the limits cut, as import does, and says how
// many it cut: the message is stored, not refused.
func TestPostBoundsHugeTexts(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	huge := strings.Repeat("ㅋ", 3*api.MaxContentBytes) // 3-byte runes
	long := strings.Repeat("n", 3*api.MaxNameBytes)
	res, err := f.c.PostMessages(ctx, &api.MessageBatch{
		Guilds:   []api.Guild{{ID: 77, Name: long}},
		Channels: []api.Channel{{ID: 78, GuildID: 77, Name: "ok", Topic: strings.Repeat("t", 2*api.MaxTopicBytes)}},
		Messages: []api.MessageUpsert{
			{ID: 79, GuildID: 77, ChannelID: 78, Author: api.Author{ID: 80, Username: "u", Nickname: long}, CreatedAt: time.Now(), Content: huge},
			{ID: 81, GuildID: 77, ChannelID: 78, Author: api.Author{ID: 80, Username: "u"}, CreatedAt: time.Now(), Content: "fine"},
		}})
	if err != nil || res.Inserted != 2 || res.Truncated != 3 {
		t.Fatalf("post: %+v, %v", res, err)
	}
	m, err := f.c.Message(ctx, 79, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Message.Content; len(c) > api.MaxContentBytes || !strings.HasSuffix(c, api.TruncatedMarker) ||
		!strings.HasPrefix(huge, strings.TrimSuffix(c, api.TruncatedMarker)) || len(m.Message.AuthorName) > api.MaxNameBytes {
		t.Errorf("stored %d bytes of content, author name %d bytes", len(c), len(m.Message.AuthorName))
	}
}

// Messages of archives older than Discord have negative IDs; they are
// stored, and read back, like any other.
func TestNegativeMessageID(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const id = -1340286991073280000
	if _, err := f.c.PostMessages(ctx, &api.MessageBatch{Messages: []api.MessageUpsert{{ID: id, ChannelID: 78,
		Author: api.Author{ID: 80, Username: "u"}, CreatedAt: time.Date(2004, 11, 15, 12, 18, 0, 0, time.UTC), Content: "an IRC line"}}}); err != nil {
		t.Fatal(err)
	}
	if m, err := f.c.Message(ctx, id, 0, 0); err != nil || m.Message.Content != "an IRC line" {
		t.Errorf("GET /v1/messages/%d: %+v, %v", id, m, err)
	}
}
