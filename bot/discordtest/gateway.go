// The fake's gateway: sessions, events, and the faults a connection meets.

package discordtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/gorilla/websocket"
)

// WaitReady waits for the bot to identify on the gateway.
func (d *Discord) WaitReady() {
	d.t.Helper()
	select {
	case <-d.ready:
	case <-time.After(10 * time.Second):
		d.t.Fatal("discordtest: the bot never identified")
	}
}

// event is one dispatch of the session, kept for a RESUME.
type event struct {
	seq  int
	name string
	data json.RawMessage
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
	d.noteInteraction(name, raw)
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

// OutageAtIdentify makes new sessions see the guild unavailable: READY
// lists it with "unavailable" and no GUILD_CREATE follows.
func (d *Discord) OutageAtIdentify(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.outageAtIdentify = on
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
			if id.Intents&intentMessageContent != 0 && d.noContentIntent {
				c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4014, "Disallowed intent(s)."))
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
	// Channels the bot may not view as stand-ins; threads only those it
	// may view ("All active threads in the guild that current user has
	// permission to view").
	for _, c := range d.guild.Channels {
		c.GuildID = g.ID
		if !isThread(c.Type) {
			chans = append(chans, d.wireLocked(c))
		} else if d.botPermissionsLocked(c.ID).Has(discord.PermissionViewChannel) {
			threads = append(threads, c)
		}
	}
	out["channels"], out["threads"], out["members"] = chans, threads, d.guild.Members
	out["joined_at"], out["member_count"], out["large"] = time.Now().UTC().Format(time.RFC3339), len(d.guild.Members), false
	out["voice_states"], out["presences"] = []any{}, []any{}
	return out
}
