package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
)

// staffTalk adds six #staff conversations about the boiler budget, days
// apart, so that an answer from #staff alone has three pages of two.
func (e *env) staffTalk() {
	e.t.Helper()
	var last discord.Message
	for i := range 6 {
		last = message(staff, user(alice, "alice"), t0.Add(time.Duration(60+10*i)*24*time.Hour),
			fmt.Sprintf("the boiler budget review number %d is confidential", i))
		e.discord.Dispatch("MESSAGE_CREATE", last)
	}
	waitFor(e.t, "the #staff messages", func() bool {
		_, err := e.c.Message(context.Background(), api.ID(last.ID), 0, 0)
		return err == nil
	})
}

// press presses a More button in a channel and returns the page it put in
// place of the old one, or the line it sent beside it instead.
func (e *env) press(channel discord.ChannelID, member discord.UserID, button string) (edit map[string]any, line string) {
	e.t.Helper()
	e.mu.Lock()
	e.seq++
	n := e.seq
	e.mu.Unlock()
	token := fmt.Sprintf("press-%d", n)
	m, _ := e.discord.Member(member)
	e.discord.Dispatch("INTERACTION_CREATE", map[string]any{"id": fmt.Sprint(8500 + n), "application_id": fmt.Sprint(appID),
		"type": 3, "data": map[string]any{"custom_id": button, "component_type": 2}, "guild_id": fmt.Sprint(guildID),
		"channel_id": fmt.Sprint(channel), "member": m, "token": token, "version": 1})
	waitFor(e.t, "the page or a line", func() bool {
		return len(e.discord.Calls("PATCH", "/webhooks/7000/"+token+"/")) > 0 || len(e.discord.Calls("POST", "/webhooks/7000/"+token)) > 0
	})
	if c := e.discord.Calls("PATCH", "/webhooks/7000/"+token+"/"); len(c) > 0 {
		json.Unmarshal(c[0].Body, &edit)
		return edit, ""
	}
	var f struct{ Content string }
	json.Unmarshal(e.discord.Calls("POST", "/webhooks/7000/"+token)[0].Body, &f)
	return nil, f.Content
}

func public(on bool) map[string]any { return map[string]any{"name": "public", "type": 5, "value": on} }

func pick(ch discord.ChannelID) map[string]any {
	return map[string]any{"name": "channel", "type": 7, "value": fmt.Sprint(ch)}
}

// allPages pages an answer to its end and returns every page's embeds.
func (e *env) allPages(channel discord.ChannelID, member discord.UserID, first map[string]any) []string {
	e.t.Helper()
	pages := []string{embedText(first)}
	for button := buttonID(first); button != ""; {
		next, line := e.press(channel, member, button)
		if next == nil {
			e.t.Fatalf("More refused: %s", line)
		}
		pages = append(pages, embedText(next))
		button = buttonID(next)
		if len(pages) > 10 {
			e.t.Fatal("More never ends")
		}
	}
	return pages
}

// A public answer shows what every reader of its channel may read, on
// every page, and says on every page that the asker shared it.
func TestPublicAnswerShowsWhatEveryReaderMayRead(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	e.staffTalk()

	// Alice (staff) answers in #general, which bob reads: no #staff.
	cb, edit, _ := e.interaction(alice, 2, query("what about the boiler budget?", public(true)))
	if f, _ := cb["data"].(map[string]any)["flags"].(float64); f != 0 {
		t.Fatalf("public reply flags %v, want 0", f)
	}
	pages := e.allPages(general, alice, edit)
	if len(pages) < 2 {
		t.Fatalf("%d page(s); the test needs More", len(pages))
	}
	for i, p := range pages {
		if strings.Contains(p, "/1000/2001/") || strings.Contains(p, "confidential") || strings.Contains(p, "secret") {
			t.Errorf("page %d of a public answer in #general shows #staff: %s", i+1, p)
		}
		if !strings.Contains(p, "shared by the asker") {
			t.Errorf("page %d of a public answer lacks the note that the asker shared it: %s", i+1, p)
		}
	}
	// Naming #staff in a public answer in #general is refused.
	_, edit, _ = e.interaction(alice, 2, query("boiler budget", public(true), pick(staff)))
	if c, _ := edit["content"].(string); !strings.Contains(c, "a public answer shows only channels everyone who reads this one can read") {
		t.Errorf("public answer naming #staff in #general: %v", edit)
	}
	// Privately, alice still sees #staff; and in #staff, whose readers are
	// all staff, a public answer may show it.
	_, edit, _ = e.interaction(alice, 2, query("boiler budget", pick(staff)))
	if !strings.Contains(embedText(edit), "/1000/2001/") {
		t.Errorf("alice's own answer from #staff: %s", embedText(edit))
	}
	_, edit, _ = e.interactionIn(staff, alice, 2, query("what about the boiler budget?", public(true)))
	if all := strings.Join(e.allPages(staff, alice, edit), "\n"); !strings.Contains(all, "/1000/2001/") {
		t.Errorf("a public answer in #staff never shows #staff: %s", all)
	}
}

// More checks the asker's channels again with each press's member data: a
// role taken away, a role deleted or a channel made private stops it.
func TestMoreRechecksRights(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	e.staffTalk()
	staffQuestion := query("boiler budget review", pick(staff))
	aliceNow, _ := e.discord.Member(alice)
	noStaff := aliceNow
	noStaff.RoleIDs = nil

	// Unchanged rights: More goes on.
	_, edit, _ := e.interaction(alice, 2, staffQuestion)
	next, line := e.press(general, alice, buttonID(edit))
	if next == nil || !strings.Contains(embedText(next), "/1000/2001/") || buttonID(next) == "" {
		t.Fatalf("More with unchanged rights: %v %q", next, line)
	}
	// The staff role is taken from alice: the next page is refused.
	e.discord.UpdateMember(noStaff)
	if next, line := e.press(general, alice, buttonID(next)); next != nil || !strings.Contains(line, "changed since it was asked") && !strings.Contains(line, "cannot read") {
		t.Errorf("More after alice lost the staff role: %s %q", embedText(next), line)
	}

	// The staff role is deleted while alice pages.
	e.discord.UpdateMember(aliceNow)
	_, edit, _ = e.interaction(alice, 2, staffQuestion)
	e.discord.DeleteRole(staffRole)
	if next, line := e.press(general, alice, buttonID(edit)); next != nil || line == "" {
		t.Errorf("More after the staff role was deleted: %s %q", embedText(next), line)
	}

	// @everyone loses the right to read while bob pages #general.
	_, edit, _ = e.interaction(bob, 2, query("boiler", pick(general)))
	everyone := fakeGuild().Guild.Roles[0]
	closed := everyone
	closed.Permissions = 0
	e.discord.UpdateRole(closed)
	waitFor(t, "the role update", func() bool {
		r, err := e.bot.state.Role(guildID, everyone.ID)
		return err == nil && r.Permissions == 0
	})
	if next, line := e.press(general, bob, buttonID(edit)); next != nil || line == "" {
		t.Errorf("More after @everyone lost reading: %s %q", embedText(next), line)
	}
	e.discord.UpdateRole(everyone)
	waitFor(t, "the role restored", func() bool {
		r, err := e.bot.state.Role(guildID, everyone.ID)
		return err == nil && r.Permissions == everyone.Permissions
	})

	// #general is made staff-only (there is no staff role any more, so
	// nobody but the owner reads it) while bob pages it.
	_, edit, _ = e.interaction(bob, 2, query("boiler", pick(general)))
	if buttonID(edit) == "" {
		t.Fatalf("bob's answer from #general has one page: %s", embedText(edit))
	}
	gen, _ := e.bot.state.Channel(general)
	private := *gen
	private.Overwrites = []discord.Overwrite{{ID: guildID, Type: discord.OverwriteRole, Deny: discord.PermissionViewChannel}}
	e.discord.UpdateChannel(private)
	waitFor(t, "the channel update", func() bool {
		ch, err := e.bot.state.Channel(general)
		return err == nil && len(ch.Overwrites) == 1
	})
	if next, line := e.press(general, bob, buttonID(edit)); next != nil || line == "" {
		t.Errorf("More after #general was made private: %s %q", embedText(next), line)
	}
}

// Without a channel picked, More compares the asker's channels now with
// those the answer searched: a role taken away stops it even though no
// named channel became unreadable, and no page searches the old list.
func TestMoreWithoutAPickRechecksRights(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	e.staffTalk()
	aliceNow, _ := e.discord.Member(alice)
	_, edit, _ := e.interaction(alice, 2, query("boiler budget review"))
	if buttonID(edit) == "" {
		t.Fatalf("alice's answer has one page: %s", embedText(edit))
	}
	noStaff := aliceNow
	noStaff.RoleIDs = nil
	e.discord.UpdateMember(noStaff)
	next, line := e.press(general, alice, buttonID(edit))
	if next != nil || !strings.Contains(line, "changed since it was asked") {
		t.Errorf("More after alice lost the staff role: %s %q", embedText(next), line)
	}
}

// A private thread is read by its members, whom the bot does not know: it
// is never searched for anyone, even a member who reads its parent, and
// naming it is refused (docs/bot.md). Only an answer posted inside it,
// where every reader is a member, shows it.
func TestPrivateThreadIsNeverSearched(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	const hidden = discord.ChannelID(2100)
	e.discord.CreateChannel(discord.Channel{ID: hidden, Type: discord.GuildPrivateThread, Name: "party", ParentID: general})
	secret := message(hidden, user(alice, "alice"), t0.Add(200*24*time.Hour), "the surprise party for bob is on friday")
	e.discord.Post(secret)
	e.waitStored("the private thread's message", secret)

	for _, ask := range []map[string]any{query("surprise party"), query("surprise party", public(true))} {
		_, edit, _ := e.interaction(bob, 2, ask)
		if text := embedText(edit); strings.Contains(text, "on friday") || strings.Contains(text, "/2100/") {
			t.Errorf("bob's answer from #general shows the private thread: %s", text)
		}
	}
	_, edit, _ := e.interaction(bob, 2, query("surprise party", pick(hidden)))
	if edit["content"] != "Sorry: you cannot read that channel." {
		t.Errorf("bob naming the private thread: %v %s", edit["content"], embedText(edit))
	}
	_, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{pick(hidden)}})
	if edit["content"] != "Sorry: you cannot read that channel." {
		t.Errorf("bob's catch-up of the private thread: %v %s", edit["content"], embedText(edit))
	}
	// Posted inside it, for its members, a public answer may show it.
	_, edit, _ = e.interactionIn(hidden, alice, 2, query("surprise party", public(true)))
	if text := embedText(edit); !strings.Contains(text, "on friday") {
		t.Errorf("a public answer inside the private thread: %v %s", edit["content"], text)
	}
}

// With a channel picked, an answer also sends what its audience may read
// (api.QueryRequest.Readable, which searchd tells how common a word is
// from): the asker's channels for a private answer, every reader's for a
// public one; never a channel the audience cannot read. Without a pick,
// nothing more than the filter.
func TestPickedChannelSendsWhatTheAudienceMayRead(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	has := func(ids []api.ID, ch discord.ChannelID) bool {
		for _, id := range ids {
			if id == api.ID(ch) {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		name      string
		who       discord.UserID
		pg        page
		staffRead bool
	}{
		{"alice, private, #general picked", alice, page{picked: general}, true},
		{"bob, private, #general picked", bob, page{picked: general}, false},
		{"alice, public in #general, #general picked", alice, page{picked: general, public: true, here: general}, false},
	} {
		m, _ := e.discord.Member(c.who)
		channels, readable, err := e.bot.answerChannels(guildID, &m, &c.pg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if has(channels, staff) || !has(channels, general) || !has(readable, general) || has(readable, staff) != c.staffRead {
			t.Errorf("%s: channels %v, readable %v; want #general searched, #staff readable %v", c.name, channels, readable, c.staffRead)
		}
		c.pg.picked = 0
		if _, readable, _ := e.bot.answerChannels(guildID, &m, &c.pg); readable != nil {
			t.Errorf("%s, no pick: readable %v, want none (the filter is all)", c.name, readable)
		}
	}
}

// With a channel picked, More compares what the audience may read too:
// #general is still alice's to read, but a role taken away changes the
// channels word statistics may count (api.QueryRequest.Readable), and
// paging stops rather than go on with the old list.
func TestMoreWithAPickRechecksWhatTheAudienceReads(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	aliceNow, _ := e.discord.Member(alice)
	_, edit, _ := e.interaction(alice, 2, query("boiler", pick(general)))
	if buttonID(edit) == "" {
		t.Fatalf("alice's answer from #general has one page: %s", embedText(edit))
	}
	noStaff := aliceNow
	noStaff.RoleIDs = nil
	e.discord.UpdateMember(noStaff)
	if next, line := e.press(general, alice, buttonID(edit)); next != nil || !strings.Contains(line, "changed since it was asked") {
		t.Errorf("More after alice lost the staff role: %s %q", embedText(next), line)
	}
}

// A member who reads more channels than searchd takes in a list must pick
// one; with a pick, the request carries no readable list and word
// statistics come from the picked channel alone, which they may read,
// never from channels they cannot.
func TestMoreChannelsThanSearchdTakesWithAPick(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	for i := range maxChannels {
		e.discord.CreateChannel(discord.Channel{ID: discord.ChannelID(5000 + i), Type: discord.GuildText, Name: fmt.Sprintf("room-%d", i)})
	}
	m, _ := e.discord.Member(alice)
	waitFor(t, "the new channels", func() bool {
		ids, err := e.bot.readableChannels(guildID, &m)
		return err == nil && len(ids) > maxChannels
	})
	if _, _, err := e.bot.answerChannels(guildID, &m, &page{}); err == nil || err.(*userError).id != "tooMany" {
		t.Errorf("no pick over %d channels: %v, want tooMany", maxChannels, err)
	}
	channels, readable, err := e.bot.answerChannels(guildID, &m, &page{picked: general})
	if err != nil || len(channels) != 1 || channels[0] != api.ID(general) || readable != nil {
		t.Errorf("#general picked: channels %v, readable %v, %v; want #general alone and no readable list", channels, readable, err)
	}
	_, edit, _ := e.interaction(alice, 2, query("boiler", pick(general)))
	if text := strings.ToLower(embedText(edit)); !strings.Contains(text, "boiler") {
		t.Errorf("alice's answer from #general over %d channels: %s", maxChannels, text)
	}
}

// Discord shows a channel's new messages to a member who may view it
// without reading its history. A public answer posted in such a channel
// reaches them, so it shows nothing of that channel's past; privately the
// asker still sees it.
func TestPublicAnswerInAChannelSomeViewWithoutHistory(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	e.staffTalk()
	ch := fakeGuild().Channels[2] // #staff
	ch.Overwrites = []discord.Overwrite{
		{ID: discord.Snowflake(guildID), Type: discord.OverwriteRole, Deny: discord.PermissionReadMessageHistory}, // bob views, no history
		{ID: discord.Snowflake(staffRole), Type: discord.OverwriteRole, Allow: discord.PermissionViewChannel | discord.PermissionReadMessageHistory},
	}
	e.discord.UpdateChannel(ch)
	waitFor(t, "the bot's state to see the overwrites", func() bool {
		c, err := e.bot.state.Channel(staff)
		return err == nil && len(c.Overwrites) == 2 && c.Overwrites[0].Deny == discord.PermissionReadMessageHistory
	})
	_, edit, _ := e.interactionIn(staff, alice, 2, query("what about the boiler budget?", public(true)))
	if all := strings.Join(e.allPages(staff, alice, edit), "\n"); strings.Contains(all, "/1000/2001/") {
		t.Errorf("a public answer in #staff, which bob views without its history, shows #staff: %s", all)
	}
	_, edit, _ = e.interactionIn(staff, alice, 2, query("boiler budget", pick(staff)))
	if !strings.Contains(embedText(edit), "/1000/2001/") {
		t.Errorf("alice's own answer from #staff: %s", embedText(edit))
	}
}

// A public answer posted inside a private thread shows the thread's past
// only if its readers may read history.
// Threads take their permissions from the parent: a member who may view
// #general but not read its history sees only the new messages of a private
// thread they are in (Discord's Get Channel Messages refuses them the past).
// publicFilter added the private thread unconditionally ("the asker is in
// it"), where for a channel it asks viewersReadHistory.
func TestPublicAnswerInPrivateThreadNeedsHistory(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	const hidden = discord.ChannelID(2100)
	e.discord.CreateChannel(discord.Channel{ID: hidden, Type: discord.GuildPrivateThread, Name: "party", ParentID: general})
	secret := message(hidden, user(alice, "alice"), t0.Add(200*24*time.Hour), "the surprise party for carol is on friday")
	e.discord.Post(secret)
	e.waitStored("the private thread's message", secret)

	// #general: bob (a member of the private thread, added after the
	// message was written) may view it but not read its history.
	gen := fakeGuild().Channels[1]
	gen.Overwrites = []discord.Overwrite{{ID: discord.Snowflake(bob), Type: discord.OverwriteMember, Deny: discord.PermissionReadMessageHistory}}
	e.discord.UpdateChannel(gen)
	waitFor(t, "the bot's state to see the overwrite", func() bool {
		c, err := e.bot.state.Channel(general)
		return err == nil && len(c.Overwrites) == 1
	})
	m, _ := e.discord.Member(bob)
	g, roles, chans, _ := e.bot.guildState(guildID)
	for i := range chans {
		if chans[i].ID == general && mayRead(g, &chans[i], &m, roles) {
			t.Fatal("test set-up: bob still reads #general's history")
		}
	}

	// (a) bob himself asks, publicly, inside the thread: he gets the
	// thread's past, which Discord would not show him.
	_, edit, _ := e.interactionIn(hidden, bob, 2, query("surprise party", public(true)))
	if text := embedText(edit); strings.Contains(text, "on friday") {
		t.Errorf("bob, without Read Message History on the parent, got the private thread's past: %s", text)
	}
	// (b) alice (who reads everything) asks publicly inside it: bob, a
	// member of the thread without history, sees the answer posted there.
	_, edit, _ = e.interactionIn(hidden, alice, 2, query("surprise party", public(true)))
	if text := embedText(edit); strings.Contains(text, "on friday") {
		t.Errorf("a public answer inside a private thread some members read without history shows its past: %s", text)
	}
}

// guildCreateWith is the GUILD_CREATE Discord sends for the fake guild,
// with roles as given: what Discord sends when a guild comes back from an
// outage, or when the bot is added to it again, after its roles changed
// while the bot was not told.
func guildCreateWith(roles []discord.Role) map[string]any {
	fg := fakeGuild()
	g := fg.Guild
	g.Roles = roles
	b, _ := json.Marshal(g)
	var out map[string]any
	json.Unmarshal(b, &out)
	var chans, threads []discord.Channel
	for _, c := range fg.Channels {
		c.GuildID = g.ID
		if isThread(c.Type) {
			threads = append(threads, c)
		} else {
			chans = append(chans, c)
		}
	}
	out["channels"], out["threads"], out["members"] = chans, threads, fg.Members
	out["joined_at"], out["member_count"], out["large"] = time.Now().UTC().Format(time.RFC3339), len(fg.Members), false
	out["voice_states"], out["presences"] = []any{}, []any{}
	return out
}

// arikawa v3.6.0 stores a GUILD_CREATE's roles with
// RoleSet(update=false), which keeps a role it already holds, and a
// GUILD_DELETE removes only the guild, never its roles. So a guild that
// comes back from an outage (or re-adds the bot) within one gateway
// session keeps the role permissions the bot saw before: changes Discord
// reports only through that GUILD_CREATE are lost, and the bot computes
// members' channels from permissions the server no longer grants.
func TestRolesReplacedWhenTheGuildComesBack(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	// Discord: the guild is unavailable; meanwhile @everyone loses every
	// permission (the server is locked down to a role bob does not have);
	// the guild comes back with its GUILD_CREATE.
	e.discord.GuildOutage()
	waitFor(t, "the outage", func() bool { _, err := e.bot.state.Guild(guildID); return err != nil })
	roles := fakeGuild().Guild.Roles
	roles[0].Permissions = 0 // @everyone
	e.discord.Dispatch("GUILD_CREATE", guildCreateWith(roles))
	waitFor(t, "the guild back", func() bool { _, err := e.bot.state.Guild(guildID); return err == nil })
	time.Sleep(200 * time.Millisecond)

	r, _ := e.bot.state.Role(guildID, discord.RoleID(guildID))
	m, _ := e.discord.Member(bob)
	ids, err := e.bot.readableChannels(guildID, &m)
	if len(ids) != 0 {
		t.Errorf("after GUILD_CREATE with @everyone at 0, the bot's state has @everyone at %v and bob may read %v (%v)", r.Permissions, ids, err)
	}
	_, edit, _ := e.interaction(bob, 2, query("boiler"))
	if text := embedText(edit); strings.Contains(text, "boiler broke") {
		t.Errorf("bob, who may read no channel now, got #general's history: %s", text)
	}
}

// A reply mentions nobody: its line may quote what the asker typed, and an
// @everyone there would ping the whole server.
func TestRepliesMentionNobody(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	_, edit, _ := e.interaction(alice, 2, query("@everyone boiler", public(true)))
	am, ok := edit["allowed_mentions"].(map[string]any)
	if parse, isList := am["parse"].([]any); !ok || !isList || len(parse) != 0 {
		t.Errorf("a public answer's allowed mentions: %v", edit["allowed_mentions"])
	}
}

// No public answer is posted in an announcement channel: a moderator may
// publish any message of it to the servers that follow it.
func TestNoPublicAnswerInAnnouncementChannel(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	const news = discord.ChannelID(2200)
	e.discord.CreateChannel(discord.Channel{ID: news, Type: discord.GuildAnnouncement, Name: "news"})
	waitFor(t, "the channel in the bot's state", func() bool { _, err := e.bot.state.Channel(news); return err == nil })
	_, edit, _ := e.interactionIn(news, alice, 2, query("boiler", public(true)))
	if text := embedText(edit); strings.Contains(text, "boiler broke") || !strings.Contains(fmt.Sprint(edit["content"]), "announcement channel") {
		t.Errorf("a public answer in an announcement channel: %v %s", edit["content"], text)
	}
}

// An announcement channel the bot may no longer view: Discord tells it as
// a CHANNEL_DELETE (the state drops it) and refuses Get Channel (403), yet
// its members may still ask there, and the answer is posted there all the
// same (an interaction's reply needs no permission of the bot). Not
// knowing what the channel is, the bot must not take it for an ordinary
// one: a moderator could publish the answer to every following server.
func TestNoPublicAnswerWhereTheBotCannotTellTheChannel(t *testing.T) {
	const news = discord.ChannelID(2200)
	open := discord.Channel{ID: news, Type: discord.GuildAnnouncement, Name: "news", ParentID: category}
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(open)
		d.DeleteOnAccessLoss(true)
	})
	e.backfilled(int64(len(history())))
	e.discord.UpdateChannel(hiddenFromBot(open))
	waitFor(t, "the deletion answered 403", func() bool {
		return strings.Contains(e.log.String(), "may no longer view was announced deleted")
	})
	if _, err := e.bot.state.Cabinet.Channel(news); err == nil {
		t.Fatal("the channel hidden from the bot is still in its state")
	}
	_, edit, _ := e.interactionIn(news, alice, 2, query("boiler", public(true)))
	if text := embedText(edit); strings.Contains(text, "boiler broke") || !strings.Contains(fmt.Sprint(edit["content"]), "cannot see") {
		t.Errorf("a public answer in a channel the bot cannot tell (an announcement channel): %v %s", edit["content"], text)
	}
	// Asked privately, it answers as anywhere.
	if _, edit, _ := e.interactionIn(news, alice, 2, query("boiler")); !strings.Contains(embedText(edit), "boiler broke") {
		t.Errorf("a private answer in a channel hidden from the bot: %v %s", edit["content"], embedText(edit))
	}
}

// A channel its members view and the bot may not (an overwrite denies it
// View Channel; since Discord obfuscates such channels, every channel
// hidden from the bot looks so): an answer posted there by an interaction
// could never be withdrawn, since editing or deleting it later takes
// viewing the channel, so a message it quotes would stay shown after its
// deletion or its author's opt-out. No public answer is posted there.
func TestNoPublicAnswerWhereTheBotCannotView(t *testing.T) {
	const lounge = discord.ChannelID(2050)
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(hiddenFromBot(discord.Channel{ID: lounge, Type: discord.GuildText, Name: "lounge", ParentID: category}))
	})
	e.backfilled(int64(len(history())))
	_, edit, _ := e.interactionIn(lounge, alice, 2, query("boiler", public(true)))
	if text := embedText(edit); strings.Contains(text, "boiler broke") || !strings.Contains(fmt.Sprint(edit["content"]), "cannot see") {
		t.Errorf("a public answer in a channel the bot cannot view: %v %s", edit["content"], text)
	}
	if _, edit, _ := e.interactionIn(lounge, alice, 2, query("boiler")); !strings.Contains(embedText(edit), "boiler broke") {
		t.Errorf("a private answer in a channel hidden from the bot: %v %s", edit["content"], embedText(edit))
	}
}

// An age-restricted (nsfw) channel: Discord shows it only to members who
// confirmed they are adults, whatever their permissions, and the bot
// cannot tell who has. Asked in a channel that is not age-restricted, no
// answer shows it, public or private, nor /catchup or "Find related"
// (audit 13: a public answer in #general quoted it to every reader);
// asked in an age-restricted channel, it is searched as any other.
func TestAgeRestrictedChannelShownOnlyInOne(t *testing.T) {
	const lounge, lounge2 = 2050, 2051
	at := t0.Add(60 * 24 * time.Hour)
	m := message(lounge, user(bob, "bob"), at, "after midnight the explicit lighthouse photos go up here")
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(
			discord.Channel{ID: lounge, Type: discord.GuildText, Name: "after-dark", ParentID: category, NSFW: true},
			discord.Channel{ID: lounge2, Type: discord.GuildText, Name: "after-dark-2", ParentID: category, NSFW: true})
		d.AddHistory(m)
	})
	e.backfilled(int64(len(history()) + 1))
	const link = "/1000/2050/"
	shows := func(edit map[string]any) bool { // the question's words are its title
		text := embedText(edit)
		return strings.Contains(text, link) || strings.Contains(text, "after midnight")
	}
	pickLounge := map[string]any{"name": "channel", "type": 7, "value": fmt.Sprint(lounge)}
	for _, in := range []discord.ChannelID{general, thread} {
		if _, edit, _ := e.interactionIn(in, alice, 2, query("explicit lighthouse photos", public(true))); shows(edit) {
			t.Errorf("a public answer in %d, not age-restricted, shows an age-restricted channel: %s", in, embedText(edit))
		}
		if _, edit, _ := e.interactionIn(in, alice, 2, query("explicit lighthouse photos")); shows(edit) {
			t.Errorf("a private answer in %d, not age-restricted, shows an age-restricted channel: %s", in, embedText(edit))
		}
	}
	if _, edit, _ := e.interaction(alice, 2, query("explicit lighthouse photos", pickLounge)); edit["content"] != "Sorry: that channel is age-restricted; ask in an age-restricted channel to search it." {
		t.Errorf("an answer in #general picking the age-restricted channel: %v", edit)
	}
	_, edit, _ := e.interaction(alice, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{{"name": "since", "type": 3, "value": "2025-07-01"}, pickLounge}})
	if shows(edit) || edit["content"] != "Sorry: that channel is age-restricted; ask in an age-restricted channel to search it." {
		t.Errorf("/catchup in #general of the age-restricted channel: %v", edit)
	}
	target := message(general, user(bob, "bob"), t0.Add(100*24*time.Hour), "explicit lighthouse photos")
	_, edit, _ = e.interaction(alice, 2, map[string]any{"id": "9002", "name": cmdRelated, "type": 3,
		"target_id": target.ID.String(), "resolved": map[string]any{"messages": map[string]any{target.ID.String(): target}}})
	if shows(edit) {
		t.Errorf("related conversations in #general show an age-restricted channel: %s", embedText(edit))
	}
	// Asked in an age-restricted channel, another one is shown, publicly too.
	if _, edit, _ := e.interactionIn(lounge2, alice, 2, query("explicit lighthouse photos", public(true))); !shows(edit) {
		t.Errorf("a public answer in an age-restricted channel leaves out another everyone reads: %s", embedText(edit))
	}
	if _, edit, _ := e.interactionIn(lounge2, alice, 2, query("explicit lighthouse photos", pickLounge)); !shows(edit) {
		t.Errorf("an answer in an age-restricted channel picking another leaves it out: %s", embedText(edit))
	}
}

// Since 2026-10-12 Discord sends a bot a channel it may not view as a
// stand-in (discord-api-docs, Obfuscated Channels): flag 1 << 17, name
// "___hidden___", age restriction and overwrites not to be relied on.
// The stored history of such a channel (an age-restricted one the bot
// lost, here) is shown to no one, whatever the stand-in's overwrites say,
// and searchd keeps the channel's real name.
func TestObfuscatedChannelShownToNoOne(t *testing.T) {
	const lounge = 2050
	at := t0.Add(60 * 24 * time.Hour)
	m := message(lounge, user(bob, "bob"), at, "after midnight the explicit lighthouse photos go up here")
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(discord.Channel{ID: lounge, Type: discord.GuildText, Name: "after-dark", ParentID: category, NSFW: true})
		d.AddHistory(m)
	})
	e.backfilled(int64(len(history()) + 1))
	// The bot loses View Channel there: Discord sends the stand-in.
	e.discord.UpdateChannel(discord.Channel{ID: lounge, Type: discord.GuildText, Name: "after-dark", ParentID: category, NSFW: true,
		Overwrites: []discord.Overwrite{{ID: discord.Snowflake(botUser), Type: discord.OverwriteMember, Deny: discord.PermissionViewChannel}}})
	waitFor(t, "the stand-in in the bot's state", func() bool {
		c, err := e.bot.state.Cabinet.Channel(lounge)
		return err == nil && c.Flags&(1<<17) != 0
	})
	for _, in := range []discord.ChannelID{general, lounge} {
		if _, edit, _ := e.interactionIn(in, alice, 2, query("explicit lighthouse photos")); strings.Contains(embedText(edit), "after midnight") {
			t.Errorf("an answer in %d shows a channel Discord hides from the bot: %s", in, embedText(edit))
		}
	}
	// Discord's stand-in denies @everyone View Channel, but its fields
	// "should not be relied on": one that denies nothing, and is not
	// age-restricted either, is still read by no one.
	e.discord.Dispatch("CHANNEL_UPDATE", discord.Channel{ID: lounge, GuildID: guildID, Type: discord.GuildText,
		Name: "___hidden___", ParentID: category, Flags: 1 << 17})
	waitFor(t, "the stand-in without overwrites in the bot's state", func() bool {
		c, err := e.bot.state.Cabinet.Channel(lounge)
		return err == nil && c.Flags&(1<<17) != 0 && len(c.Overwrites) == 0
	})
	if _, edit, _ := e.interactionIn(general, alice, 2, query("explicit lighthouse photos")); strings.Contains(embedText(edit), "after midnight") {
		t.Errorf("an answer shows a channel Discord hides from the bot, its stand-in denying nothing: %s", embedText(edit))
	}
	time.Sleep(1500 * time.Millisecond) // a batch placing the stand-in would be flushed by now
	chans, err := e.c.Channels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chans {
		if c.ID == lounge && c.Name != "after-dark" {
			t.Errorf("searchd names the channel %q, want its name before Discord hid it", c.Name)
		}
	}
}
