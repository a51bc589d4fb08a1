package discordtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
)

// Reply is a message the bot posted by answering an interaction, as
// Discord keeps it: its ID and channel, what it shows now, and whether it
// was deleted.
type Reply struct {
	ID      discord.MessageID
	Channel discord.ChannelID
	Content string
	Embeds  string // the embeds' JSON
	Deleted bool
}

// replyBook holds the interactions' replies: Discord gives each
// interaction's original response a message in the interaction's channel
// (a button press's is the message its button is on).
type replyBook struct {
	channelOf map[string]discord.ChannelID // an interaction token's channel
	pressOf   map[string]string            // a press's token: the button's custom ID
	byToken   map[string]*replyMsg
	byButton  map[string]*replyMsg
	byID      map[discord.MessageID]*replyMsg
	next      discord.MessageID
}

type replyMsg struct {
	Reply
	body map[string]any
}

// noteInteraction remembers an INTERACTION_CREATE's token and channel
// (and a press's button), for its replies. d.mu is held.
func (d *Discord) noteInteraction(name string, raw []byte) {
	if name != "INTERACTION_CREATE" {
		return
	}
	var in struct {
		Token     string            `json:"token"`
		ChannelID discord.ChannelID `json:"channel_id"`
		Data      struct {
			CustomID string `json:"custom_id"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &in) != nil {
		return
	}
	rb := d.book()
	rb.channelOf[in.Token] = in.ChannelID
	if in.Data.CustomID != "" {
		rb.pressOf[in.Token] = in.Data.CustomID
	}
}

func (d *Discord) book() *replyBook {
	if d.replies == nil {
		d.replies = &replyBook{channelOf: map[string]discord.ChannelID{}, pressOf: map[string]string{},
			byToken: map[string]*replyMsg{}, byButton: map[string]*replyMsg{}, byID: map[discord.MessageID]*replyMsg{}}
	}
	return d.replies
}

// apply edits a reply as Discord's message edits do: the fields sent
// replace theirs, the others stay.
func (d *Discord) apply(m *replyMsg, body []byte) {
	var patch map[string]any
	json.Unmarshal(body, &patch)
	for k, v := range patch {
		m.body[k] = v
	}
	m.Content, _ = m.body["content"].(string)
	e, _ := json.Marshal(m.body["embeds"])
	m.Embeds = string(e)
	if comps, ok := m.body["components"].([]any); ok {
		for _, row := range comps {
			r, _ := row.(map[string]any)
			inner, _ := r["components"].([]any)
			for _, c := range inner {
				if c, ok := c.(map[string]any); ok {
					if id, ok := c["custom_id"].(string); ok {
						d.book().byButton[id] = m
					}
				}
			}
		}
	}
}

func (m *replyMsg) message(me discord.User) map[string]any {
	out := map[string]any{}
	for k, v := range m.body {
		out[k] = v
	}
	out["id"], out["channel_id"], out["author"] = m.ID.String(), m.Channel.String(), me
	return out
}

// editOriginal answers Edit Original Interaction Response: the token's
// reply (the first edit of a deferred reply creates it; a press's is
// the message of its button).
func (d *Discord) editOriginal(w http.ResponseWriter, token string, body []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	rb := d.book()
	m := rb.byToken[token]
	if m == nil {
		m = rb.byButton[rb.pressOf[token]]
	}
	if m == nil {
		rb.next++
		m = &replyMsg{Reply: Reply{ID: discord.MessageID(discord.NewSnowflake(time.Now())) + rb.next, Channel: rb.channelOf[token]}, body: map[string]any{}}
		rb.byID[m.ID] = m
	}
	rb.byToken[token] = m
	if m.Deleted {
		writeJSON(w, 404, map[string]any{"message": "Unknown Message", "code": 10008})
		return
	}
	d.apply(m, body)
	writeJSON(w, 200, m.message(d.Me))
}

// channelMessage answers Edit Message and Delete Message by channel and
// message ID, as Discord answers a bot without Manage Messages: its own
// messages it may edit and delete; another's is refused (50005 to an
// edit, 50013 to a deletion); a deleted message or channel is unknown.
func (d *Discord) channelMessage(w http.ResponseWriter, r *http.Request, ch, id string, body []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	exists := slices.ContainsFunc(append(slices.Clone(d.guild.Channels), d.guild.Archived...), func(c discord.Channel) bool { return c.ID.String() == ch })
	if !exists {
		writeJSON(w, 404, map[string]any{"message": "Unknown Channel", "code": 10003})
		return
	}
	if cid, _ := discord.ParseSnowflake(ch); !d.botPermissionsLocked(discord.ChannelID(cid)).Has(discord.PermissionViewChannel) {
		// Even its own message: a channel route takes View Channel.
		writeJSON(w, 403, map[string]any{"message": "Missing Access", "code": 50001})
		return
	}
	for _, m := range d.book().byID {
		if m.ID.String() != id || m.Channel.String() != ch || m.Deleted {
			continue
		}
		if r.Method == "DELETE" {
			m.Deleted = true
			w.WriteHeader(204)
			return
		}
		d.apply(m, body)
		writeJSON(w, 200, m.message(d.Me))
		return
	}
	cid, _ := discord.ParseSnowflake(ch)
	if slices.ContainsFunc(d.messages[discord.ChannelID(cid)], func(m discord.Message) bool { return m.ID.String() == id }) {
		if r.Method == "DELETE" {
			writeJSON(w, 403, map[string]any{"message": "Missing Permissions", "code": 50013})
		} else {
			writeJSON(w, 403, map[string]any{"message": "Cannot edit a message authored by another user", "code": 50005})
		}
		return
	}
	writeJSON(w, 404, map[string]any{"message": "Unknown Message", "code": 10008})
}

// ReplyTo is the message an interaction's token answered with, as it is
// now.
func (d *Discord) ReplyTo(token string) (Reply, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if m := d.book().byToken[token]; m != nil {
		return m.Reply, true
	}
	return Reply{}, false
}
