// The fake's REST API: the routes the bot calls, answered as Discord does.

package discordtest

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"
)

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
	if d.failed(w, r) || d.limitsBroken(w, r, parts, body) {
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
		d.editOriginal(w, parts[2], body)
	case r.Method == "POST" && len(parts) == 3 && parts[0] == "webhooks": // a followup message
		var m map[string]any
		json.Unmarshal(body, &m)
		m["id"], m["channel_id"], m["author"] = "2", "1", d.Me
		writeJSON(w, 200, m)
	case r.Method == "GET" && len(parts) == 2 && parts[0] == "channels":
		// Get Channel: 404 Unknown Channel for one that does not exist,
		// 403 Missing Access for one the bot may not view (a thread: its
		// parent), as Discord answers.
		id, _ := discord.ParseSnowflake(parts[1])
		perms := d.botPermissions(discord.ChannelID(id))
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, c := range append(slices.Clone(d.guild.Channels), d.guild.Archived...) {
			if c.ID.String() == parts[1] {
				if !perms.Has(discord.PermissionViewChannel) {
					writeJSON(w, 403, map[string]any{"message": "Missing Access", "code": 50001})
					return
				}
				c.GuildID = d.guild.Guild.ID
				writeJSON(w, 200, c)
				return
			}
		}
		writeJSON(w, 404, map[string]any{"message": "Unknown Channel", "code": 10003})
	case r.Method == "GET" && len(parts) == 3 && parts[0] == "channels" && parts[2] == "messages":
		d.messagesPage(w, r, parts[1])
	case (r.Method == "PATCH" || r.Method == "DELETE") && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		d.channelMessage(w, r, parts[1], parts[3], body)
	case r.Method == "GET" && len(parts) == 4 && parts[0] == "channels" && parts[2] == "messages":
		d.oneMessage(w, parts[1], parts[3])
	case r.Method == "GET" && len(parts) == 4 && parts[0] == "guilds" && parts[2] == "members":
		id, _ := discord.ParseSnowflake(parts[3])
		if m, ok := d.Member(discord.UserID(id)); ok {
			writeJSON(w, 200, m)
			return
		}
		writeJSON(w, 404, map[string]any{"message": "Unknown Member", "code": 10007})
	case r.Method == "GET" && path == "/guilds/"+d.guild.Guild.ID.String()+"/channels":
		// Get Guild Channels omits the channels the bot may not view.
		d.mu.Lock()
		chans := d.visibleLocked()
		d.mu.Unlock()
		writeJSON(w, 200, chans)
	case r.Method == "GET" && path == "/guilds/"+d.guild.Guild.ID.String()+"/threads/active":
		d.mu.Lock()
		defer d.mu.Unlock()
		var threads []discord.Channel
		for _, c := range d.guild.Channels {
			if isThread(c.Type) && d.botPermissionsLocked(c.ID).Has(discord.PermissionViewChannel) {
				threads = append(threads, c)
			}
		}
		writeJSON(w, 200, map[string]any{"threads": threads, "members": []any{}})
	case r.Method == "GET" && len(parts) == 5 && parts[0] == "channels" && parts[2] == "threads" && parts[4] == "public":
		d.archivedPage(w, r, parts[1])
	case r.Method == "GET" && len(parts) == 7 && parts[0] == "channels" && parts[2] == "users" && parts[3] == "@me" && parts[6] == "private":
		d.joinedPrivatePage(w, r, parts[1])
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
		// Public threads only (announcement threads are public): Discord
		// lists archived private threads on routes of their own.
		if c.Type != discord.GuildPrivateThread && c.ParentID.String() == parent && (before.IsZero() || archivedAt(c).Before(before)) {
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

// joinedPrivatePage answers List Joined Private Archived Threads as
// Discord does: the channel's archived private threads the bot joined
// (ThreadMember set), by ID, newest first, those before the thread ID
// given (not a time, as the public listing), at most limit (default 50).
func (d *Discord) joinedPrivatePage(w http.ResponseWriter, r *http.Request, parent string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var before discord.Snowflake
	if v := r.URL.Query().Get("before"); v != "" {
		var err error
		if before, err = discord.ParseSnowflake(v); err != nil {
			writeJSON(w, 400, map[string]any{"message": "Invalid Form Body", "code": 50035})
			return
		}
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 50
	}
	threads := []discord.Channel{}
	for _, c := range d.guild.Archived {
		if c.Type == discord.GuildPrivateThread && c.ThreadMember != nil && c.ParentID.String() == parent &&
			(before == 0 || discord.Snowflake(c.ID) < before) {
			threads = append(threads, c)
		}
	}
	slices.SortFunc(threads, func(a, b discord.Channel) int { return cmp.Compare(b.ID, a.ID) })
	more := len(threads) > limit
	writeJSON(w, 200, map[string]any{"threads": threads[:min(limit, len(threads))], "members": []any{}, "has_more": more})
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
			writeJSON(w, 200, d.withheld(m))
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
	d.mu.Lock()
	for i := range page {
		page[i] = d.withheld(page[i])
	}
	d.mu.Unlock()
	writeJSON(w, 200, page)
}

// botPermissions are the bot's permissions in a channel (a thread: its
// parent's), from the guild's roles and the channel's overwrites, as
// Discord computes them.
func (d *Discord) botPermissions(id discord.ChannelID) discord.Permissions {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.botPermissionsLocked(id)
}

// botPermissionsLocked is botPermissions with d.mu held.
func (d *Discord) botPermissionsLocked(id discord.ChannelID) discord.Permissions {
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

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
