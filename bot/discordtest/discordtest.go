// Package discordtest is a fake Discord for tests: the REST API the bot
// uses, served by httptest behind a transport that rewrites discord.com
// to it, and a websocket gateway that speaks the real protocol (HELLO,
// IDENTIFY, READY, heartbeats, dispatches). Like Discord, it keeps a
// session's events so a RESUME replays what a dropped connection missed,
// answers a RESUME it refuses with INVALID_SESSION, can close the
// gateway with any close code, and can fail any REST route with 429 or
// 5xx. It records what the bot sends so tests can assert on it.
package discordtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/gorilla/websocket"
)

// Token is the bot token the fake accepts.
const Token = "fake-token"

// Guild is the server the fake hosts.
type Guild struct {
	Guild    discord.Guild
	Channels []discord.Channel // including active threads
	Archived []discord.Channel // archived threads (a private one listed to the bot if ThreadMember is set)
	Members  []discord.Member  // the bot's own member included
}

// Call is one REST request the bot made.
type Call struct {
	Method, Path string
	Query        url.Values
	Body         json.RawMessage
	At           time.Time
}

// Discord is the fake.
type Discord struct {
	t      *testing.T
	srv    *httptest.Server
	App    discord.AppID
	Me     discord.User
	guild  Guild
	upgrad websocket.Upgrader

	mu       sync.Mutex
	messages map[discord.ChannelID][]discord.Message // ascending by ID
	calls    []Call
	conn     *websocket.Conn
	intents  uint // what the bot identified with
	ready    chan struct{}
	changed  chan struct{}
	faults   []*fault
	removed  bool // the bot was removed from the guild
	// outageAtIdentify: a new session's READY lists the guild as
	// unavailable and no GUILD_CREATE follows (a guild outage).
	outageAtIdentify bool
	offline          bool // the gateway refuses connections
	// deleteOnAccessLoss: see DeleteOnAccessLoss.
	deleteOnAccessLoss bool
	noContentIntent    bool       // see MessageContentIntentOff
	replies            *replyBook // the interactions' replies (replies.go)
	refusals           []string   // requests refused for Discord's limits (limits.go)

	// The gateway session: its ID, its sequence and its events (kept for
	// RESUME), how often the bot identified and resumed.
	session      string
	seq          int
	events       []event
	refuseResume bool
	identified   int
	resumed      int
}

// fault makes n requests of a route fail after skip of them passed.
type fault struct {
	method, part    string
	status, skip, n int
}

// New starts a fake Discord hosting g.
func New(t *testing.T, g Guild, me discord.User, app discord.AppID) *Discord {
	d := &Discord{t: t, App: app, Me: me, guild: g, messages: map[discord.ChannelID][]discord.Message{},
		ready: make(chan struct{}), changed: make(chan struct{}, 1)}
	d.srv = httptest.NewServer(http.HandlerFunc(d.serve))
	// Registered first, so it runs last, once the bot stopped: the bot
	// handles Discord's refusal, so a test would not see it otherwise.
	t.Cleanup(func() {
		for _, r := range d.Refusals() {
			t.Errorf("discordtest: Discord refuses what the bot sent: %s", r)
		}
	})
	t.Cleanup(d.Close)
	return d
}

// Close stops the fake.
func (d *Discord) Close() {
	d.mu.Lock()
	if d.conn != nil {
		d.conn.Close()
	}
	d.mu.Unlock()
	d.srv.Close()
}

// Transport sends requests for discord.com to the fake instead.
func (d *Discord) Transport() http.RoundTripper { return rewrite{to: d.srv.URL} }

type rewrite struct{ to string }

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != "discord.com" {
		return nil, fmt.Errorf("discordtest: request to %s, not discord.com", req.URL.Host)
	}
	u, _ := url.Parse(r.to)
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = u.Scheme, u.Host, u.Host
	return http.DefaultTransport.RoundTrip(req)
}

// AddHistory stores messages as if sent before the bot connected.
func (d *Discord) AddHistory(msgs ...discord.Message) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range msgs {
		d.messages[m.ChannelID] = append(d.messages[m.ChannelID], m)
		slices.SortFunc(d.messages[m.ChannelID], func(a, b discord.Message) int { return cmp.Compare(a.ID, b.ID) })
	}
}

// AddChannels adds channels and active threads as if made before the bot
// connected: no event.
func (d *Discord) AddChannels(chs ...discord.Channel) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ch := range chs {
		ch.GuildID = d.guild.Guild.ID
		d.guild.Channels = append(d.guild.Channels, ch)
	}
}

// AddArchived adds archived threads (ThreadMetadata's ArchiveTimestamp
// set): Discord lists them apart (archivedPage, joinedPrivatePage).
func (d *Discord) AddArchived(threads ...discord.Channel) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ch := range threads {
		ch.GuildID = d.guild.Guild.ID
		d.guild.Archived = append(d.guild.Archived, ch)
	}
}

// Calls returns the REST requests made so far whose path contains part.
func (d *Discord) Calls(method, part string) []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Call
	for _, c := range d.calls {
		if c.Method == method && strings.Contains(c.Path, part) {
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls waits until at least n requests match, or fails the test.
func (d *Discord) WaitCalls(method, part string, n int) []Call {
	d.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if c := d.Calls(method, part); len(c) >= n {
			return c
		}
		select {
		case <-d.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			d.t.Fatalf("discordtest: waited for %d %s %s calls, got %d", n, method, part, len(d.Calls(method, part)))
		}
	}
}

// MessageContentIntentOff is an application whose Message Content intent
// is switched off in the Developer Portal: an IDENTIFY asking for the
// intent is closed with 4014 (Disallowed intent(s)), and REST serves
// messages with empty content, embeds, attachments and components, but
// for the bot's own and those that mention it (Discord's "Message
// Content Intent" docs).
func (d *Discord) MessageContentIntentOff() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.noContentIntent = true
}

// withheld is m as an application without the Message Content intent
// gets it.
func (d *Discord) withheld(m discord.Message) discord.Message {
	if !d.noContentIntent || m.Author.ID == d.Me.ID || slices.ContainsFunc(m.Mentions, func(u discord.GuildUser) bool { return u.ID == d.Me.ID }) {
		return m
	}
	m.Content, m.Embeds, m.Attachments, m.Components = "", nil, nil, nil
	return m
}

// Post stores messages and dispatches their MESSAGE_CREATE.
func (d *Discord) Post(msgs ...discord.Message) {
	d.t.Helper()
	d.AddHistory(msgs...)
	for _, m := range msgs {
		d.dispatchIfViewed(m.ChannelID, "MESSAGE_CREATE", m)
	}
}

// dispatchIfViewed dispatches a message event of channel ch only if the
// bot may view it (a thread: its parent): Discord sends nothing of a
// channel a bot may not view.
func (d *Discord) dispatchIfViewed(ch discord.ChannelID, name string, data any) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.botPermissionsLocked(ch).Has(discord.PermissionViewChannel) {
		d.dispatch(name, data)
	}
}

// Edit replaces a stored message and dispatches its MESSAGE_UPDATE.
func (d *Discord) Edit(m discord.Message) {
	d.t.Helper()
	d.Replace(m)
	d.dispatchIfViewed(m.ChannelID, "MESSAGE_UPDATE", m)
}

// Replace changes a stored message without telling the gateway.
func (d *Discord) Replace(m discord.Message) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, old := range d.messages[m.ChannelID] {
		if old.ID == m.ID {
			d.messages[m.ChannelID][i] = m
		}
	}
}

// Delete removes a stored message and dispatches its MESSAGE_DELETE.
func (d *Discord) Delete(ch discord.ChannelID, id discord.MessageID) {
	d.t.Helper()
	d.Remove(ch, id)
	d.dispatchIfViewed(ch, "MESSAGE_DELETE", map[string]any{"id": id, "channel_id": ch, "guild_id": d.guild.Guild.ID})
}

// Remove deletes a stored message without telling the gateway.
func (d *Discord) Remove(ch discord.ChannelID, id discord.MessageID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.messages[ch] = slices.DeleteFunc(d.messages[ch], func(m discord.Message) bool { return m.ID == id })
}

// CreateChannel adds a channel or thread and dispatches CHANNEL_CREATE or
// THREAD_CREATE.
func (d *Discord) CreateChannel(ch discord.Channel) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	ch.GuildID = d.guild.Guild.ID
	d.guild.Channels = append(d.guild.Channels, ch)
	switch {
	case !isThread(ch.Type):
		d.dispatch("CHANNEL_CREATE", d.wireLocked(ch)) // a stand-in if the bot may not view it
	case d.botPermissionsLocked(ch.ID).Has(discord.PermissionViewChannel):
		d.dispatch("THREAD_CREATE", ch) // not sent of a thread in a channel the bot may not view
	}
}

// ArchiveThread archives an active thread as Discord does (by hand or
// after its inactivity): it moves to the archived listings, and
// THREAD_UPDATE is dispatched (lost with the session if no bot is
// connected).
func (d *Discord) ArchiveThread(id discord.ChannelID, at time.Time) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	i := slices.IndexFunc(d.guild.Channels, func(c discord.Channel) bool { return c.ID == id })
	if i < 0 {
		d.t.Fatalf("discordtest: no active thread %s", id)
	}
	th := d.guild.Channels[i]
	d.guild.Channels = slices.Delete(d.guild.Channels, i, i+1)
	meta := discord.ThreadMetadata{}
	if th.ThreadMetadata != nil {
		meta = *th.ThreadMetadata
	}
	meta.Archived, meta.ArchiveTimestamp = true, discord.NewTimestamp(at)
	th.ThreadMetadata = &meta
	d.guild.Archived = append(d.guild.Archived, th)
	d.dispatch("THREAD_UPDATE", th)
}

// DeleteChannel deletes a channel or thread with its messages and
// dispatches CHANNEL_DELETE or THREAD_DELETE. Deleting a channel deletes
// its threads too, as Discord does, without an event of their own.
func (d *Discord) DeleteChannel(id discord.ChannelID) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deleteChannel(id, true)
}

// DeleteChannelUnseen deletes a channel as DeleteChannel does but
// dispatches nothing: deleted while its guild was unavailable (Discord
// sends no event of an unavailable guild; its next GUILD_CREATE just
// lacks the channel).
func (d *Discord) DeleteChannelUnseen(id discord.ChannelID) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deleteChannel(id, false)
}

func (d *Discord) deleteChannel(id discord.ChannelID, dispatch bool) {
	var gone *discord.Channel
	// As the bot was shown it: a stand-in if it may not view it.
	var wire discord.Channel
	if i := slices.IndexFunc(d.guild.Channels, func(c discord.Channel) bool { return c.ID == id }); i >= 0 {
		wire = d.wireLocked(d.guild.Channels[i])
	}
	keep := func(list []discord.Channel) []discord.Channel {
		return slices.DeleteFunc(list, func(c discord.Channel) bool {
			if c.ID == id {
				c := c
				gone = &c
			}
			if c.ID == id || c.ParentID == id && isThread(c.Type) {
				delete(d.messages, c.ID)
				return true
			}
			return false
		})
	}
	d.guild.Channels, d.guild.Archived = keep(d.guild.Channels), keep(d.guild.Archived)
	delete(d.messages, id)
	if gone == nil {
		d.t.Fatalf("discordtest: no channel %s to delete", id)
	}
	gone.GuildID = d.guild.Guild.ID
	if !dispatch {
		return
	}
	if isThread(gone.Type) {
		d.dispatch("THREAD_DELETE", map[string]any{"id": gone.ID, "guild_id": gone.GuildID, "parent_id": gone.ParentID, "type": gone.Type})
	} else {
		d.dispatch("CHANNEL_DELETE", wire)
	}
}

// RemoveBot removes the bot from the guild (kicked, or the guild deleted):
// GUILD_DELETE without "unavailable", and the guild's routes refuse it
// from now on.
func (d *Discord) RemoveBot() {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.removed = true
	d.dispatch("GUILD_DELETE", map[string]any{"id": d.guild.Guild.ID})
}

// AddBot adds the bot back to the guild after RemoveBot (invited
// again): its routes answer again and GUILD_CREATE is dispatched.
func (d *Discord) AddBot() {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.removed = false
	d.dispatch("GUILD_CREATE", d.guildCreate())
}

// GuildOutage makes the guild unavailable (a Discord outage): GUILD_DELETE
// with "unavailable": true, and nothing of it is dispatched until
// GuildBack sends its GUILD_CREATE again.
func (d *Discord) GuildOutage() {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dispatch("GUILD_DELETE", map[string]any{"id": d.guild.Guild.ID, "unavailable": true})
}

// GuildBack ends a GuildOutage with GUILD_CREATE.
func (d *Discord) GuildBack() {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dispatch("GUILD_CREATE", d.guildCreate())
}

func isThread(t discord.ChannelType) bool {
	return t == discord.GuildPublicThread || t == discord.GuildPrivateThread || t == discord.GuildAnnouncementThread
}

// Fault makes the next n requests whose method is method and whose path
// contains part fail with status: 429 (with Retry-After: 1) or a 5xx.
func (d *Discord) Fault(method, part string, status, n int) {
	d.FaultAfter(method, part, status, 0, n)
}

// FaultAfter is Fault for the n requests that follow the next skip.
func (d *Discord) FaultAfter(method, part string, status, skip, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.faults = append(d.faults, &fault{method, part, status, skip, n})
}
