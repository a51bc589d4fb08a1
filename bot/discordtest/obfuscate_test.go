package discordtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/diamondburned/arikawa/v3/discord"
)

// The fake shows the bot what Discord does: a stand-in for each channel
// it may not view (a category only if it may view none of its
// channels), no thread of such a channel, and Get Guild Channels without
// them.
func TestObfuscation(t *testing.T) {
	const guild, me, cat, open, closed, lone, emptyCat, th = 1, 2, 10, 11, 12, 13, 14, 15
	deny := []discord.Overwrite{{ID: guild, Type: discord.OverwriteRole, Deny: discord.PermissionViewChannel}}
	d := New(t, Guild{
		Guild: discord.Guild{ID: guild, OwnerID: 99, Roles: []discord.Role{{ID: guild, Permissions: discord.PermissionViewChannel}}},
		Channels: []discord.Channel{
			{ID: cat, Type: discord.GuildCategory, Name: "cat", Overwrites: deny},
			{ID: open, Type: discord.GuildText, Name: "open", ParentID: cat},
			{ID: closed, Type: discord.GuildText, Name: "closed", ParentID: cat, Overwrites: deny, Topic: "secret", NSFW: true},
			{ID: emptyCat, Type: discord.GuildCategory, Name: "empty", Overwrites: deny},
			{ID: lone, Type: discord.GuildText, Name: "lone", ParentID: emptyCat, Overwrites: deny},
			{ID: th, Type: discord.GuildPublicThread, Name: "thread", ParentID: closed},
		},
		Members: []discord.Member{{User: discord.User{ID: me}}},
	}, discord.User{ID: me, Bot: true}, 3)
	d.mu.Lock()
	gc := d.guildCreate()
	d.mu.Unlock()
	b, _ := json.Marshal(gc)
	var got struct {
		Channels []discord.Channel `json:"channels"`
		Threads  []discord.Channel `json:"threads"`
	}
	json.Unmarshal(b, &got)
	hidden := map[discord.ChannelID]bool{}
	for _, c := range got.Channels {
		if c.Flags&ChannelObfuscated != 0 {
			hidden[c.ID] = true
			if c.Name != HiddenName || c.Topic != "" || c.NSFW || c.ParentID == 0 && c.Type != discord.GuildCategory {
				t.Errorf("stand-in %+v", c)
			}
		}
	}
	want := map[discord.ChannelID]bool{closed: true, lone: true, emptyCat: true}
	if len(hidden) != len(want) || !hidden[closed] || !hidden[lone] || !hidden[emptyCat] {
		t.Errorf("GUILD_CREATE hides %v, want %v", hidden, want)
	}
	if len(got.Threads) != 0 {
		t.Errorf("GUILD_CREATE lists a thread of a hidden channel: %+v", got.Threads)
	}
	req, _ := http.NewRequest("GET", "https://discord.com/api/v9/guilds/1/channels", nil)
	req.Header.Set("Authorization", "Bot "+Token)
	resp, err := d.Transport().RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var listed []discord.Channel
	json.NewDecoder(resp.Body).Decode(&listed)
	if len(listed) != 2 || listed[0].ID != cat || listed[1].ID != open {
		t.Errorf("Get Guild Channels: %+v, want the category and #open", listed)
	}
	// View of #lone returns: its real channel, and its category's, which
	// was hidden with it; then its threads.
	d.mu.Lock()
	d.intents = intentGuilds
	d.mu.Unlock()
	d.UpdateChannel(discord.Channel{ID: lone, Type: discord.GuildText, Name: "lone", ParentID: emptyCat})
	var names []string
	for _, e := range d.events {
		var c discord.Channel
		json.Unmarshal(e.data, &c)
		names = append(names, e.name+" "+c.Name)
	}
	if want := []string{"CHANNEL_UPDATE empty", "CHANNEL_UPDATE lone", "THREAD_LIST_SYNC "}; !slices.Equal(names, want) {
		t.Errorf("events %q, want %q", names, want)
	}
}
