// Package discordtest is a fake Discord for tests: the REST API the bot
// uses, served by httptest behind a transport that rewrites discord.com
// to it, and a websocket gateway that speaks the real protocol (HELLO,
// IDENTIFY, READY, heartbeats, dispatches). It records what the bot sends
// so tests can assert on it.
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
	seq      int
	ready    chan struct{}
	changed  chan struct{}
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

// Dispatch sends a gateway event (op 0) such as MESSAGE_CREATE.
func (d *Discord) Dispatch(event string, data any) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.send(0, event, data); err != nil {
		d.t.Fatalf("discordtest: dispatch %s: %v", event, err)
	}
}

// send writes one gateway payload; d.mu is held.
func (d *Discord) send(op int, event string, data any) error {
	if d.conn == nil {
		return fmt.Errorf("no gateway connection")
	}
	p := map[string]any{"op": op, "d": data}
	if op == 0 {
		d.seq++
		p["s"], p["t"] = d.seq, event
	}
	return d.conn.WriteJSON(p)
}

func (d *Discord) serve(w http.ResponseWriter, r *http.Request) {
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
	switch {
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
	case r.Method == "GET" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		d.messagesPage(w, r, parts[1])
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
		var threads []discord.Channel
		for _, c := range d.guild.Archived {
			if c.ParentID.String() == parts[1] {
				threads = append(threads, c)
			}
		}
		writeJSON(w, 200, map[string]any{"threads": threads, "members": []any{}, "has_more": false})
	default:
		writeJSON(w, 404, map[string]any{"message": "404: Not Found", "code": 0})
	}
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
	d.mu.Unlock()
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

// gateway speaks the gateway protocol on one websocket: HELLO, then READY
// and GUILD_CREATE after IDENTIFY, heartbeat ACKs, and whatever tests
// Dispatch.
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
			err = d.send(0, "READY", map[string]any{"v": 9, "user": d.Me, "session_id": "fake-session",
				"resume_gateway_url": "ws" + strings.TrimPrefix(d.srv.URL, "http") + "/gateway",
				"guilds":             []map[string]any{{"id": d.guild.Guild.ID, "unavailable": true}}, "private_channels": []any{},
				"application": map[string]any{"id": d.App, "flags": 0}})
			if err == nil {
				err = d.send(0, "GUILD_CREATE", d.guildCreate())
			}
			select {
			case <-d.ready:
			default:
				close(d.ready)
			}
		}
		d.mu.Unlock()
		if err != nil {
			return
		}
	}
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
