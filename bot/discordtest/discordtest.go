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
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
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
	Archived []discord.Channel // archived public threads
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

	// The gateway session: its ID, its sequence and its events (kept for
	// RESUME), how often the bot identified and resumed.
	session      string
	seq          int
	events       []event
	refuseResume bool
	identified   int
	resumed      int
}

// event is one dispatch of the session, kept for a RESUME.
type event struct {
	seq  int
	name string
	data json.RawMessage
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

// AddArchived adds archived public threads (ThreadMetadata's
// ArchiveTimestamp set): Discord lists them apart (archivedPage).
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

// WaitReady waits for the bot to identify on the gateway.
func (d *Discord) WaitReady() {
	d.t.Helper()
	select {
	case <-d.ready:
	case <-time.After(10 * time.Second):
		d.t.Fatal("discordtest: the bot never identified")
	}
}

// Dispatch sends a gateway event (op 0) such as MESSAGE_CREATE. Like
// Discord, it keeps the event in the session: while the bot is
// disconnected it waits there for a RESUME, and it is lost if the
// session is not resumed.
func (d *Discord) Dispatch(name string, data any) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dispatch(name, data)
}

// dispatch is Dispatch with d.mu held.
func (d *Discord) dispatch(name string, data any) {
	d.t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		d.t.Fatalf("discordtest: dispatch %s: %v", name, err)
	}
	d.seq++
	d.events = append(d.events, event{d.seq, name, raw})
	if d.conn != nil {
		d.writeEvent(d.events[len(d.events)-1]) // a write error is a dropped connection: the event waits for RESUME
	}
}

func (d *Discord) writeEvent(e event) error {
	return d.conn.WriteJSON(map[string]any{"op": 0, "d": e.data, "s": e.seq, "t": e.name})
}

// send writes one gateway payload; a dispatch (op 0) is kept in the
// session, as dispatch does. d.mu is held.
func (d *Discord) send(op int, event string, data any) error {
	if op == 0 {
		d.dispatch(event, data)
		return nil
	}
	if d.conn == nil {
		return fmt.Errorf("no gateway connection")
	}
	return d.conn.WriteJSON(map[string]any{"op": op, "d": data})
}

// Post stores messages and dispatches their MESSAGE_CREATE.
func (d *Discord) Post(msgs ...discord.Message) {
	d.t.Helper()
	d.AddHistory(msgs...)
	for _, m := range msgs {
		d.Dispatch("MESSAGE_CREATE", m)
	}
}

// Edit replaces a stored message and dispatches its MESSAGE_UPDATE.
func (d *Discord) Edit(m discord.Message) {
	d.t.Helper()
	d.Replace(m)
	d.Dispatch("MESSAGE_UPDATE", m)
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
	d.Dispatch("MESSAGE_DELETE", map[string]any{"id": id, "channel_id": ch, "guild_id": d.guild.Guild.ID})
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
	if isThread(ch.Type) {
		d.dispatch("THREAD_CREATE", ch)
	} else {
		d.dispatch("CHANNEL_CREATE", ch)
	}
}

// DeleteChannel deletes a channel or thread with its messages and
// dispatches CHANNEL_DELETE or THREAD_DELETE. Deleting a channel deletes
// its threads too, as Discord does, without an event of their own.
func (d *Discord) DeleteChannel(id discord.ChannelID) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	var gone *discord.Channel
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
	if isThread(gone.Type) {
		d.dispatch("THREAD_DELETE", map[string]any{"id": gone.ID, "guild_id": gone.GuildID, "parent_id": gone.ParentID, "type": gone.Type})
	} else {
		d.dispatch("CHANNEL_DELETE", gone)
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

// OutageAtIdentify makes new sessions see the guild unavailable: READY
// lists it with "unavailable" and no GUILD_CREATE follows.
func (d *Discord) OutageAtIdentify(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.outageAtIdentify = on
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

// Disconnect drops the gateway connection without a close frame, as a
// network failure does; the bot reconnects and resumes.
func (d *Discord) Disconnect() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		d.conn.UnderlyingConn().Close()
		d.conn = nil
	}
}

// Offline makes the gateway refuse connections (a Discord or network
// outage) until Offline(false); events dispatched meanwhile wait in the
// session for a RESUME.
func (d *Discord) Offline(off bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.offline = off
	if off && d.conn != nil {
		d.conn.UnderlyingConn().Close()
		d.conn = nil
	}
}

// RefuseResume makes every RESUME from now on fail with INVALID_SESSION
// (d: false), as when Discord has dropped the session: the bot identifies
// anew and the session's missed events are lost.
func (d *Discord) RefuseResume() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refuseResume = true
}

// InvalidateSession sends INVALID_SESSION (d: false) on the live
// connection: the bot must identify anew.
func (d *Discord) InvalidateSession() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.session = ""
	if err := d.send(9, "", false); err != nil {
		d.t.Errorf("discordtest: invalid session: %v", err)
	}
}

// CloseGateway closes the gateway connection with a close code, such as
// 4004 (authentication failed) or 4014 (disallowed intents).
func (d *Discord) CloseGateway(code int, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn == nil {
		d.t.Fatal("discordtest: no gateway connection to close")
	}
	d.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason))
	d.conn.Close()
	d.conn = nil
}

// Sessions reports how often the bot identified (a new session) and
// resumed one.
func (d *Discord) Sessions() (identified, resumed int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.identified, d.resumed
}

// WaitSessions waits until the bot identified and resumed at least so
// often, or fails the test.
func (d *Discord) WaitSessions(identified, resumed int) {
	d.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		i, r := d.Sessions()
		if i >= identified && r >= resumed {
			return
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			d.t.Fatalf("discordtest: waited for %d identifies and %d resumes, got %d and %d", identified, resumed, i, r)
		}
	}
}

func (d *Discord) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	offline := d.offline
	d.mu.Unlock()
	if r.URL.Path == "/gateway" && offline {
		http.Error(w, "gateway unavailable", http.StatusServiceUnavailable)
		return
	}
	if r.URL.Path == "/gateway" {
		d.gateway(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	d.mu.Lock()
	d.calls = append(d.calls, Call{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: body, At: time.Now()})
	d.mu.Unlock()
	select {
	case d.changed <- struct{}{}:
	default:
	}
	if r.Header.Get("Authorization") != "Bot "+Token {
		writeJSON(w, 401, map[string]any{"message": "401: Unauthorized", "code": 0})
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/api/v9")
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if d.failed(w, r) {
		return
	}
	d.mu.Lock()
	removed := d.removed
	d.mu.Unlock()
	switch {
	case removed && path != "/gateway/bot" && parts[0] != "interactions" && parts[0] != "webhooks":
		writeJSON(w, 403, map[string]any{"message": "Missing Access", "code": 50001})
	case path == "/gateway/bot":
		writeJSON(w, 200, map[string]any{"url": "ws" + strings.TrimPrefix(d.srv.URL, "http") + "/gateway", "shards": 1,
			"session_start_limit": map[string]int{"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}})
	case r.Method == "PUT" && len(parts) == 5 && parts[0] == "applications" && parts[4] == "commands":
		var cmds []map[string]any
		json.Unmarshal(body, &cmds)
		for i, c := range cmds {
			c["id"], c["application_id"], c["version"] = strconv.Itoa(9000+i), d.App.String(), "1"
		}
		writeJSON(w, 200, cmds)
	case r.Method == "POST" && len(parts) == 4 && parts[0] == "interactions" && parts[3] == "callback":
		w.WriteHeader(204)
	case r.Method == "PATCH" && len(parts) == 5 && parts[0] == "webhooks" && parts[4] == "@original":
		var m map[string]any
		json.Unmarshal(body, &m)
		m["id"], m["channel_id"], m["author"] = "1", "1", d.Me
		writeJSON(w, 200, m)
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "webhooks": // a followup message
		var m map[string]any
		json.Unmarshal(body, &m)
		m["id"], m["channel_id"], m["author"] = "2", "1", d.Me
		writeJSON(w, 200, m)
	case r.Method == "GET" && len(parts) == 2 && parts[0] == "channels":
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, c := range append(slices.Clone(d.guild.Channels), d.guild.Archived...) {
			if c.ID.String() == parts[1] {
				c.GuildID = d.guild.Guild.ID
				writeJSON(w, 200, c)
				return
			}
		}
		writeJSON(w, 404, map[string]any{"message": "Unknown Channel", "code": 10003})
	case r.Method == "GET" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		d.messagesPage(w, r, parts[1])
	case r.Method == "GET" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		d.oneMessage(w, parts[1], parts[3])
	case r.Method == "GET" && len(parts) == 4 && parts[0] == "guilds" && parts[2] == "members":
		id, _ := discord.ParseSnowflake(parts[3])
		if m, ok := d.Member(discord.UserID(id)); ok {
			writeJSON(w, 200, m)
			return
		}
		writeJSON(w, 404, map[string]any{"message": "Unknown Member", "code": 10007})
	case r.Method == "GET" && path == "/guilds/"+d.guild.Guild.ID.String()+"/threads/active":
		var threads []discord.Channel
		for _, c := range d.guild.Channels {
			if c.Type == discord.GuildPublicThread || c.Type == discord.GuildPrivateThread {
				threads = append(threads, c)
			}
		}
		writeJSON(w, 200, map[string]any{"threads": threads, "members": []any{}})
	case r.Method == "GET" && len(parts) == 5 && parts[0] == "channels" && parts[2] == "threads" && parts[4] == "public":
		d.archivedPage(w, r, parts[1])
	default:
		writeJSON(w, 404, map[string]any{"message": "404: Not Found", "code": 0})
	}
}

// archivedPage answers List Public Archived Threads as Discord does:
// newest archived first, those archived before the time given (to
// whatever precision it is given in), at most limit (default 50), and
// whether there are more.
func (d *Discord) archivedPage(w http.ResponseWriter, r *http.Request, parent string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var before time.Time
	if v := r.URL.Query().Get("before"); v != "" {
		var err error
		if before, err = time.Parse(time.RFC3339Nano, v); err != nil {
			writeJSON(w, 400, map[string]any{"message": "Invalid Form Body", "code": 50035})
			return
		}
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 50
	}
	archivedAt := func(c discord.Channel) time.Time {
		if c.ThreadMetadata == nil {
			return time.Time{}
		}
		return c.ThreadMetadata.ArchiveTimestamp.Time()
	}
	var threads []discord.Channel
	for _, c := range d.guild.Archived {
		if c.ParentID.String() == parent && (before.IsZero() || archivedAt(c).Before(before)) {
			threads = append(threads, c)
		}
	}
	slices.SortStableFunc(threads, func(a, b discord.Channel) int { return archivedAt(b).Compare(archivedAt(a)) })
	more := len(threads) > limit
	// Discord's times carry microseconds; arikawa writes whole seconds.
	page := make([]map[string]any, 0, limit)
	for _, c := range threads[:min(limit, len(threads))] {
		b, _ := json.Marshal(c)
		var m map[string]any
		json.Unmarshal(b, &m)
		if meta, ok := m["thread_metadata"].(map[string]any); ok {
			meta["archive_timestamp"] = archivedAt(c).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
		}
		page = append(page, m)
	}
	writeJSON(w, 200, map[string]any{"threads": page, "members": []any{}, "has_more": more})
}

// failed answers a request a Fault names.
func (d *Discord) failed(w http.ResponseWriter, r *http.Request) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, f := range d.faults {
		if f.method != r.Method || !strings.Contains(r.URL.Path, f.part) {
			continue
		}
		if f.skip > 0 {
			f.skip--
			return false
		}
		if f.n--; f.n == 0 {
			d.faults = slices.Delete(d.faults, i, i+1)
		}
		if f.status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, 429, map[string]any{"message": "You are being rate limited.", "retry_after": 1.0, "global": false})
		} else {
			writeJSON(w, f.status, map[string]any{"message": http.StatusText(f.status), "code": 0})
		}
		return true
	}
	return false
}

// oneMessage answers Get Channel Message as Discord does: 403 without View
// Channel or Read Message History, 404 for a message it does not have.
func (d *Discord) oneMessage(w http.ResponseWriter, channel, message string) {
	ch, _ := discord.ParseSnowflake(channel)
	id, _ := discord.ParseSnowflake(message)
	if !d.botPermissions(discord.ChannelID(ch)).Has(discord.PermissionViewChannel | discord.PermissionReadMessageHistory) {
		writeJSON(w, 403, map[string]any{"message": "Missing Access", "code": 50001})
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.messages[discord.ChannelID(ch)] {
		if discord.Snowflake(m.ID) == id {
			writeJSON(w, 200, m)
			return
		}
	}
	writeJSON(w, 404, map[string]any{"message": "Unknown Message", "code": 10008})
}

// messagesPage serves GET /channels/{id}/messages like Discord: at most
// limit (≤ 100) messages, newest first, before or after a message.
func (d *Discord) messagesPage(w http.ResponseWriter, r *http.Request, channel string) {
	q := r.URL.Query()
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit < 1 || limit > 100 {
		writeJSON(w, 400, map[string]any{"message": "Invalid Form Body", "code": 50035})
		return
	}
	id, _ := discord.ParseSnowflake(channel)
	before, _ := discord.ParseSnowflake(q.Get("before"))
	after, _ := discord.ParseSnowflake(q.Get("after"))
	d.mu.Lock()
	all := slices.Clone(d.messages[discord.ChannelID(id)])
	exists := slices.ContainsFunc(d.guild.Channels, func(c discord.Channel) bool { return c.ID == discord.ChannelID(id) }) ||
		slices.ContainsFunc(d.guild.Archived, func(c discord.Channel) bool { return c.ID == discord.ChannelID(id) })
	d.mu.Unlock()
	if !exists {
		writeJSON(w, 404, map[string]any{"message": "Unknown Channel", "code": 10003})
		return
	}
	switch perms := d.botPermissions(discord.ChannelID(id)); {
	case !perms.Has(discord.PermissionViewChannel):
		writeJSON(w, 403, map[string]any{"message": "Missing Access", "code": 50001})
		return
	case !perms.Has(discord.PermissionReadMessageHistory):
		// Discord's answer to a bot that may view a channel but not read
		// its history: no error, an empty page.
		writeJSON(w, 200, []discord.Message{})
		return
	}
	var page []discord.Message
	if after.IsValid() {
		for _, m := range all { // the oldest after it
			if discord.Snowflake(m.ID) > after && len(page) < limit {
				page = append(page, m)
			}
		}
		slices.Reverse(page)
	} else {
		for i := len(all) - 1; i >= 0 && len(page) < limit; i-- {
			if !before.IsValid() || discord.Snowflake(all[i].ID) < before {
				page = append(page, all[i])
			}
		}
	}
	if page == nil {
		page = []discord.Message{}
	}
	writeJSON(w, 200, page)
}

// botPermissions are the bot's permissions in a channel (a thread: its
// parent's), from the guild's roles and the channel's overwrites, as
// Discord computes them.
func (d *Discord) botPermissions(id discord.ChannelID) discord.Permissions {
	d.mu.Lock()
	defer d.mu.Unlock()
	g := d.guild.Guild
	all := append(slices.Clone(d.guild.Channels), d.guild.Archived...)
	find := func(id discord.ChannelID) *discord.Channel {
		for i := range all {
			if all[i].ID == id {
				return &all[i]
			}
		}
		return nil
	}
	ch := find(id)
	if ch != nil && (ch.Type == discord.GuildPublicThread || ch.Type == discord.GuildPrivateThread || ch.Type == discord.GuildAnnouncementThread) {
		ch = find(ch.ParentID)
	}
	var me discord.Member
	for _, m := range d.guild.Members {
		if m.User.ID == d.Me.ID {
			me = m
		}
	}
	if g.OwnerID == d.Me.ID {
		return discord.PermissionAll
	}
	var perms discord.Permissions
	for _, r := range g.Roles {
		if discord.RoleID(g.ID) == r.ID || slices.Contains(me.RoleIDs, r.ID) {
			perms |= r.Permissions
		}
	}
	if perms.Has(discord.PermissionAdministrator) {
		return discord.PermissionAll
	}
	if ch == nil {
		return perms
	}
	var allow, deny discord.Permissions
	for _, o := range ch.Overwrites { // @everyone first, then the roles together, then the member
		if o.Type == discord.OverwriteRole && discord.RoleID(o.ID) == discord.RoleID(g.ID) {
			perms = perms&^o.Deny | o.Allow
		}
	}
	for _, o := range ch.Overwrites {
		if o.Type == discord.OverwriteRole && slices.Contains(me.RoleIDs, discord.RoleID(o.ID)) {
			allow, deny = allow|o.Allow, deny|o.Deny
		}
	}
	perms = perms&^deny | allow
	for _, o := range ch.Overwrites {
		if o.Type == discord.OverwriteMember && discord.UserID(o.ID) == d.Me.ID {
			perms = perms&^o.Deny | o.Allow
		}
	}
	return perms
}

// gateway speaks the gateway protocol on one websocket: HELLO; READY and
// GUILD_CREATE after IDENTIFY (a new session); after RESUME the events the
// session missed and RESUMED, or INVALID_SESSION when it refuses; heartbeat
// ACKs; and whatever tests Dispatch.
func (d *Discord) gateway(w http.ResponseWriter, r *http.Request) {
	c, err := d.upgrad.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	d.mu.Lock()
	d.conn = c
	err = d.send(10, "", map[string]int{"heartbeat_interval": 45000})
	d.mu.Unlock()
	if err != nil {
		return
	}
	for {
		var p struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if err := c.ReadJSON(&p); err != nil {
			return
		}
		d.mu.Lock()
		if d.conn != c { // dropped by the test
			d.mu.Unlock()
			return
		}
		switch p.Op {
		case 1: // heartbeat
			err = d.send(11, "", nil)
		case 2: // identify
			var id struct {
				Token   string `json:"token"`
				Intents uint   `json:"intents"`
			}
			json.Unmarshal(p.D, &id)
			d.intents = id.Intents
			if id.Token != "Bot "+Token {
				c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."))
				d.mu.Unlock()
				return
			}
			err = d.identify()
		case 6: // resume
			var res struct {
				SessionID string `json:"session_id"`
				Seq       int    `json:"seq"`
			}
			json.Unmarshal(p.D, &res)
			if d.refuseResume || res.SessionID != d.session {
				err = d.send(9, "", false)
				break
			}
			d.resumed++
			for _, e := range d.events {
				if e.seq > res.Seq && err == nil {
					err = d.writeEvent(e)
				}
			}
			if err == nil {
				d.seq++
				err = d.writeEvent(event{d.seq, "RESUMED", json.RawMessage("{}")})
			}
		}
		d.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// identify begins a new session; d.mu is held.
func (d *Discord) identify() error {
	d.identified++
	d.session, d.seq, d.events = fmt.Sprintf("fake-session-%d", d.identified), 0, nil
	guilds := []map[string]any{}
	if !d.removed {
		guilds = append(guilds, map[string]any{"id": d.guild.Guild.ID, "unavailable": true})
	}
	d.dispatch("READY", map[string]any{"v": 9, "user": d.Me, "session_id": d.session,
		"resume_gateway_url": "ws" + strings.TrimPrefix(d.srv.URL, "http") + "/gateway",
		"guilds":             guilds, "private_channels": []any{},
		"application": map[string]any{"id": d.App, "flags": 0}})
	if !d.removed && !d.outageAtIdentify {
		d.dispatch("GUILD_CREATE", d.guildCreate())
	}
	select {
	case <-d.ready:
	default:
		close(d.ready)
	}
	return nil
}

func (d *Discord) guildCreate() map[string]any {
	g := d.guild.Guild
	b, _ := json.Marshal(g)
	var out map[string]any
	json.Unmarshal(b, &out)
	var chans, threads []discord.Channel
	for _, c := range d.guild.Channels {
		c.GuildID = g.ID
		if c.Type == discord.GuildPublicThread || c.Type == discord.GuildPrivateThread {
			threads = append(threads, c)
		} else {
			chans = append(chans, c)
		}
	}
	out["channels"], out["threads"], out["members"] = chans, threads, d.guild.Members
	out["joined_at"], out["member_count"], out["large"] = time.Now().UTC().Format(time.RFC3339), len(d.guild.Members), false
	out["voice_states"], out["presences"] = []any{}, []any{}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
