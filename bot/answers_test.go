package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
)

const withdrawnLine = "This answer was withdrawn"

// publicAnswer asks a public /query in a channel and returns the reply
// Discord keeps for it, which must show want.
func (e *env) publicAnswer(channel discord.ChannelID, question, want string) (token string) {
	e.t.Helper()
	_, edit, _ := e.interactionIn(channel, alice, 2, query(question, public(true)))
	if !strings.Contains(embedText(edit), want) {
		e.t.Fatalf("the public answer does not show %q: %s", want, embedText(edit))
	}
	e.mu.Lock()
	token = fmt.Sprintf("token-%d", e.seq)
	e.mu.Unlock()
	// The fake logs a call as it arrives and keeps its reply once handled.
	waitFor(e.t, fmt.Sprintf("Discord to keep a reply showing %q", want), func() bool {
		r, ok := e.discord.ReplyTo(token)
		return ok && strings.Contains(r.Embeds, want)
	})
	return token
}

// withdrawn waits until the reply shows the withdrawal line and no embed.
func (e *env) withdrawn(token string) {
	e.t.Helper()
	waitFor(e.t, "the public answer withdrawn", func() bool {
		r, _ := e.discord.ReplyTo(token)
		return r.Deleted || strings.Contains(r.Content, withdrawnLine) && (r.Embeds == "[]" || r.Embeds == "null")
	})
}

// historyMessage is the message of the history with text.
func historyMessage(t *testing.T, text string) discord.Message {
	for _, m := range history() {
		if m.Content == text {
			return m
		}
	}
	t.Fatalf("no message %q", text)
	return discord.Message{}
}

func (e *env) goneFromSearchd(id discord.MessageID) {
	e.t.Helper()
	waitFor(e.t, "the deletion in searchd", func() bool {
		_, err := e.c.Message(context.Background(), api.ID(id), 0, 0)
		return err != nil
	})
}

const boilerBroke = "the boiler broke again, no hot water this morning"

func TestPublicAnswerWithdrawnWhenAQuotedMessageIsDeleted(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke)
	m := historyMessage(t, boilerBroke)
	e.discord.Delete(general, m.ID)
	e.withdrawn(token)
	// SPOOL/answers holds IDs, never text, and only its owner reads it.
	data, err := os.ReadFile(filepath.Join(e.cfg.SpoolDir, "answers"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "boiler") {
		t.Errorf("SPOOL/answers holds message text: %s", data)
	}
	if fi, _ := os.Stat(filepath.Join(e.cfg.SpoolDir, "answers")); fi.Mode().Perm() != 0o600 {
		t.Errorf("SPOOL/answers mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestPublicAnswerWithdrawnByABulkDelete(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke)
	m := historyMessage(t, boilerBroke)
	e.discord.Remove(general, m.ID)
	e.discord.Dispatch("MESSAGE_DELETE_BULK", map[string]any{"ids": []discord.MessageID{m.ID}, "channel_id": general, "guild_id": guildID})
	e.withdrawn(token)
}

func TestPublicAnswerWithdrawnWhenAQuotedAuthorOptsOut(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke) // bob's words
	_, edit, _ := e.interaction(bob, 2, map[string]any{"id": "9010", "name": "optout", "type": 1})
	e.interaction(bob, 3, map[string]any{"custom_id": buttons(edit)[0], "component_type": 2})
	e.withdrawn(token)
}

func TestPublicAnswerWithdrawnWhenItsThreadIsDeleted(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "lighthouse trip", "lighthouse trip on saturday")
	e.discord.DeleteChannel(thread)
	e.withdrawn(token)
}

func TestPublicAnswerWithdrawnWhenTheChannelOfAQuotedThreadIsDeleted(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	// Asked in #staff (its readers read #general too), quoting #general's thread.
	token := e.publicAnswer(staff, "lighthouse trip", "lighthouse trip on saturday")
	e.discord.DeleteChannel(general)
	e.withdrawn(token)
}

func TestPublicAnswerWithdrawnForADeletionWhileTheBotWasAway(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke)
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	m := historyMessage(t, boilerBroke)
	e.discord.Remove(general, m.ID) // nobody listening
	e.start()
	e.withdrawn(token)
}

func TestPublicAnswerQuotingNothingDeletedStays(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke)
	before, _ := e.discord.ReplyTo(token)
	other := historyMessage(t, "small talk number 3 about the weather")
	if strings.Contains(before.Embeds, other.Content) {
		t.Fatalf("the answer quotes the message the test deletes")
	}
	e.discord.Delete(general, other.ID)
	e.goneFromSearchd(other.ID)
	time.Sleep(300 * time.Millisecond)
	if after, _ := e.discord.ReplyTo(token); after != before {
		t.Errorf("an answer quoting nothing deleted changed: %+v", after)
	}
	if c := e.discord.Calls("PATCH", "/channels/"); len(c) > 0 {
		t.Errorf("the bot edited a message by channel: %s", c[0].Path)
	}
}

var _ = discordtest.Token

// A withdrawal Discord refuses is tried again at the next start, not at
// every later withdrawal (each would send two more refused requests and
// log an error), and an answer in a server the bot left, which Discord
// will never let it edit, is dropped from the record, not tried.
func TestRefusedWithdrawalWaitsForTheNextStart(t *testing.T) {
	dir := t.TempDir()
	s, err := loadAnswers(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	edit := func(a *answer) error {
		if a.Guild != 1 {
			return nil // another server's answer: withdrawn
		}
		calls.Add(1)
		return errors.New("403 Missing Access")
	}
	s.edit = edit
	ctx, cancel := context.WithCancel(context.Background())
	go s.run(ctx)
	s.record(1001, 10, 1, &quotes{messages: []api.ID{500}, channel: []api.ID{10}})
	s.remove(&removal{messages: setOf([]api.ID{500})})
	waitFor(t, "the first withdrawal attempt", func() bool { return calls.Load() >= 1 })
	time.Sleep(200 * time.Millisecond)
	first := calls.Load()
	for i := range 5 { // answers withdrawn in another server
		s.record(api.ID(2000+i), 20, 2, &quotes{messages: []api.ID{api.ID(9000 + i)}, channel: []api.ID{20}})
		s.remove(&removal{messages: setOf([]api.ID{api.ID(9000 + i)})})
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if n := calls.Load(); n != first {
		t.Errorf("a refused withdrawal was tried again %d times by other withdrawals", n-first)
	}
	cancel()
	// The next start tries it again.
	s2, err := loadAnswers(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	s2.edit = edit
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go s2.run(ctx2)
	waitFor(t, "the attempt at the next start", func() bool { return calls.Load() > first })
	// The bot removed from the server: the answer's record goes, untried.
	tried := calls.Load()
	s2.remove(&removal{guilds: setOf([]api.ID{1})})
	time.Sleep(200 * time.Millisecond)
	if n := calls.Load(); n != tried || s2.withdrawn(1001) {
		t.Errorf("an answer in a server the bot left: %d more attempts, still recorded %v; want none, dropped", n-tried, s2.withdrawn(1001))
	}
}

// A More page edited in while its reply is being withdrawn is withdrawn
// too: its record replaced the one in flight, and once that edit returned
// it was marked withdrawn with no quotes, page 2 shown and untracked.
func TestMorePageDuringWithdrawalIsWithdrawnToo(t *testing.T) {
	s, err := loadAnswers(t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var calls atomic.Int32
	s.edit = func(*answer) error {
		if calls.Add(1) == 1 {
			<-release // the first withdrawal's edit is in flight
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.run(ctx)
	const reply, m1, m2 = 1001, 501, 502
	s.record(reply, 10, 1, &quotes{messages: []api.ID{m1}, channel: []api.ID{10}})
	s.remove(&removal{messages: setOf([]api.ID{m1})})
	waitFor(t, "the withdrawal in flight", func() bool { return calls.Load() == 1 })
	s.record(reply, 10, 1, &quotes{messages: []api.ID{m2}, channel: []api.ID{10}}) // page 2 edited in
	close(release)
	waitFor(t, "page 2 withdrawn too", func() bool { return calls.Load() >= 2 })
}

// A message deleted while the answer quoting it was being written (its
// removal taken before the answer was recorded) withdraws the answer once
// recorded; an answer quoting nothing removed stays.
func TestAnswerRecordedAfterItsQuoteWasRemovedIsWithdrawn(t *testing.T) {
	s, err := loadAnswers(t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var edited atomic.Int64
	s.edit = func(a *answer) error { edited.Store(int64(a.Reply)); return nil }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.run(ctx)
	s.remove(&removal{messages: setOf([]api.ID{500}), authors: setOf([]api.ID{77})})
	s.record(1001, 10, 1, &quotes{messages: []api.ID{501}, authors: []api.ID{78}, channel: []api.ID{10}})
	s.record(1002, 10, 1, &quotes{messages: []api.ID{500}, channel: []api.ID{10}})
	waitFor(t, "the answer quoting a message removed before it was recorded withdrawn", func() bool { return edited.Load() == 1002 })
	s.record(1003, 10, 1, &quotes{messages: []api.ID{502}, authors: []api.ID{77}, channel: []api.ID{10}})
	waitFor(t, "the answer quoting an author who opted out before it was recorded withdrawn", func() bool { return edited.Load() == 1003 })
	if s.withdrawn(1001) {
		t.Error("an answer quoting nothing removed was withdrawn")
	}
}

// An edit that takes a quoted text out of a message withdraws the public
// answers quoting it: they showed the old text and the LLM's summary of
// it. An answer quoting a message edited before it was posted stays.
func TestPublicAnswerWithdrawnWhenAQuotedMessageIsEditedAway(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke)
	m := historyMessage(t, boilerBroke)
	m.Content = "never mind"
	m.EditedTimestamp = discord.NewTimestamp(time.Now())
	e.discord.Edit(m)
	waitFor(t, "the answer withdrawn", func() bool {
		r, _ := e.discord.ReplyTo(token)
		return !strings.Contains(r.Embeds, boilerBroke)
	})
	// Asked again after the edit: the new text, which stays.
	later := e.publicAnswer(general, "never mind", "never mind")
	time.Sleep(time.Second)
	if r, _ := e.discord.ReplyTo(later); !strings.Contains(r.Embeds, "never mind") {
		t.Errorf("an answer quoting a message edited before it was posted was withdrawn: %+v", r)
	}
}

// The authors a result's header names are recorded with the previews'
// (searchd gives their IDs): a member named only there, opting out,
// withdraws the answer too.
func TestPublicAnswerRecordsTheAuthorsItsHeadersName(t *testing.T) {
	e := setup(t)
	q := e.bot.quotesOf(&api.QueryResponse{Results: []api.SearchResult{
		{MessageID: 1, ChannelID: api.ID(general), Authors: []string{"only in the header"}, AuthorIDs: []api.ID{77}}}}, en)
	if !slices.Contains(q.authors, 77) {
		t.Errorf("the header's author is not recorded: %v", q.authors)
	}
}

// narrowings are the ways a channel stops being shown in a public
// answer posted elsewhere.
var narrowings = []struct {
	name   string
	narrow func(discord.Channel) discord.Channel
}{
	{"closed to everyone", func(ch discord.Channel) discord.Channel {
		ch.Overwrites = []discord.Overwrite{{ID: discord.Snowflake(guildID), Type: discord.OverwriteRole, Deny: discord.PermissionViewChannel}}
		return ch
	}},
	{"age-restricted", func(ch discord.Channel) discord.Channel { ch.NSFW = true; return ch }},
}

// A public answer showed what everyone reading its channel could read
// then. Once a channel it quotes is closed to some of them, or becomes
// age-restricted, it is withdrawn; an answer quoting only channels still
// shown there stays.
func TestPublicAnswerWithdrawnWhenAQuotedChannelNarrows(t *testing.T) {
	const lounge = 2050
	m := message(lounge, user(bob, "bob"), t0.Add(60*24*time.Hour), "the lighthouse keeper retires in spring")
	open := discord.Channel{ID: lounge, Type: discord.GuildText, Name: "lounge", ParentID: category}
	for _, tc := range narrowings {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, func(d *discordtest.Discord) {
				d.AddChannels(open)
				d.AddHistory(m)
			})
			e.backfilled(int64(len(history()) + 1))
			token := e.publicAnswer(general, "lighthouse keeper retires", "lighthouse keeper")
			pickGeneral := map[string]any{"name": "channel", "type": 7, "value": fmt.Sprint(general)}
			if _, edit, _ := e.interactionIn(general, alice, 2, query("boiler broke", public(true), pickGeneral)); !strings.Contains(embedText(edit), boilerBroke) {
				t.Fatalf("the answer picking #general does not show it: %s", embedText(edit))
			}
			e.mu.Lock()
			stays := fmt.Sprintf("token-%d", e.seq)
			e.mu.Unlock()
			e.discord.UpdateChannel(tc.narrow(open))
			e.withdrawn(token)
			if r, _ := e.discord.ReplyTo(stays); r.Deleted || !strings.Contains(r.Embeds, boilerBroke) {
				t.Errorf("the answer quoting only #general was withdrawn: %+v", r)
			}
		})
	}
}

// A public answer posted in a private thread showed what every reader of
// its parent could read (its members must view the parent): once a quoted
// channel narrows, its members who may no longer read it go on seeing it
// unless the answer is withdrawn as one in a public thread would be.
func TestPublicAnswerInAPrivateThreadWithdrawnWhenAQuotedChannelNarrows(t *testing.T) {
	const lounge, party = 2050, discord.ChannelID(2100)
	m := message(lounge, user(bob, "bob"), t0.Add(60*24*time.Hour), "the lighthouse keeper retires in spring")
	open := discord.Channel{ID: lounge, Type: discord.GuildText, Name: "lounge", ParentID: category}
	for _, tc := range narrowings {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, func(d *discordtest.Discord) {
				d.AddChannels(open)
				d.AddHistory(m)
			})
			e.backfilled(int64(len(history()) + 1))
			e.discord.CreateChannel(discord.Channel{ID: party, Type: discord.GuildPrivateThread, Name: "party", ParentID: general})
			waitFor(t, "the bot's state to see the private thread", func() bool {
				_, err := e.bot.state.Channel(party)
				return err == nil
			})
			own := message(party, user(alice, "alice"), t0.Add(200*24*time.Hour), "the surprise party for carol is on friday")
			e.discord.Post(own)
			e.waitStored("the private thread's message", own)
			token := e.publicAnswer(party, "lighthouse keeper retires", "lighthouse keeper")
			stays := e.publicAnswer(party, "surprise party carol", "on friday")
			e.discord.UpdateChannel(tc.narrow(open))
			e.withdrawn(token)
			if r, _ := e.discord.ReplyTo(stays); r.Deleted || !strings.Contains(r.Embeds, "on friday") {
				t.Errorf("the answer quoting only the private thread was withdrawn: %+v", r)
			}
		})
	}
}

// An answer quoting an archived thread (not in the gateway's state:
// GUILD_CREATE lists active threads only) is withdrawn when the thread's
// parent narrows, as one quoting the parent's own messages is.
func TestPublicAnswerQuotingAnArchivedThreadWithdrawnWhenItsParentNarrows(t *testing.T) {
	const lounge, old = 2050, 2051
	m := message(old, user(bob, "bob"), t0.Add(60*24*time.Hour), "the lighthouse keeper retires in spring")
	open := discord.Channel{ID: lounge, Type: discord.GuildText, Name: "lounge", ParentID: category}
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(open)
		d.AddArchived(discord.Channel{ID: old, Type: discord.GuildPublicThread, ParentID: lounge, Name: "keepers",
			ThreadMetadata: &discord.ThreadMetadata{Archived: true, ArchiveTimestamp: discord.NewTimestamp(t0.Add(61 * 24 * time.Hour))}})
		d.AddHistory(m)
	})
	e.backfilled(int64(len(history()) + 1))
	// The catch-up may have asked Discord for the thread (the state keeps
	// what it fetched); after a restart whose catch-up found nothing new
	// in it, the state has never held it.
	th := discord.Channel{ID: old, GuildID: guildID, Type: discord.GuildPublicThread, ParentID: lounge}
	if err := e.bot.state.Cabinet.ChannelRemove(&th); err != nil {
		t.Fatal(err)
	}
	token := e.publicAnswer(general, "lighthouse keeper retires", "lighthouse keeper")
	open.NSFW = true
	e.discord.UpdateChannel(open)
	e.withdrawn(token)
}

// narrowDuringQuery is searchd answering a query only after during ran:
// a channel narrows while a public answer is being written.
type narrowDuringQuery struct {
	Searchd
	once   *sync.Once
	during func()
}

func (n narrowDuringQuery) Query(ctx context.Context, req *api.QueryRequest) (*api.QueryResponse, error) {
	n.once.Do(n.during)
	return n.Searchd.Query(ctx, req)
}

// A channel that narrows while a public answer quoting it is being
// written (searchd and the LLM take seconds) withdraws it once posted:
// the access check ran before the answer was recorded, and no later
// change of access may come.
func TestPublicAnswerWrittenWhileAQuotedChannelNarrowsIsWithdrawn(t *testing.T) {
	const lounge = 2050
	m := message(lounge, user(bob, "bob"), t0.Add(60*24*time.Hour), "the lighthouse keeper retires in spring")
	open := discord.Channel{ID: lounge, Type: discord.GuildText, Name: "lounge", ParentID: category}
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(open)
		d.AddHistory(m)
	})
	e.backfilled(int64(len(history()) + 1))
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	done := func() int { return strings.Count(e.log.String(), "backfill: guild done") }
	before := done()
	ctx, cancel := context.WithCancel(context.Background())
	b, err := New(ctx, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.searchd = narrowDuringQuery{Searchd: b.searchd, once: &sync.Once{}, during: func() {
		narrowed := open
		narrowed.NSFW = true
		e.discord.UpdateChannel(narrowed)
		waitFor(t, "the bot's state to see #lounge age-restricted", func() bool { return b.ageRestricted(lounge) })
		time.Sleep(200 * time.Millisecond) // the access check's handler done
	}}
	e.bot, e.cancel, e.done = b, cancel, make(chan error, 1)
	go func() { e.done <- b.Run(ctx) }()
	waitFor(t, "the catch-up on start", func() bool { return done() > before })
	token := e.publicAnswer(general, "lighthouse keeper retires", "lighthouse keeper")
	e.withdrawn(token)
}

// A channel closed to everyone, the bot included, may reach the bot as a
// CHANNEL_DELETE (Discord tells a channel the bot may no longer view so;
// deleted.go keeps it, 403): the state no longer holds it and Discord
// refuses to show it, yet the answers quoting it must go, as they do when
// the bot still views it.
func TestPublicAnswerWithdrawnWhenAQuotedChannelClosesToTheBotToo(t *testing.T) {
	const lounge = 2050
	m := message(lounge, user(bob, "bob"), t0.Add(60*24*time.Hour), "the lighthouse keeper retires in spring")
	open := discord.Channel{ID: lounge, Type: discord.GuildText, Name: "lounge", ParentID: category}
	e := setup(t, func(d *discordtest.Discord) {
		d.AddChannels(open)
		d.AddHistory(m)
		d.DeleteOnAccessLoss(true)
	})
	e.backfilled(int64(len(history()) + 1))
	token := e.publicAnswer(general, "lighthouse keeper retires", "lighthouse keeper")
	closed := open
	closed.Overwrites = []discord.Overwrite{{ID: discord.Snowflake(guildID), Type: discord.OverwriteRole, Deny: discord.PermissionViewChannel}}
	e.discord.UpdateChannel(hiddenFromBot(closed))
	waitFor(t, "the deletion answered 403", func() bool {
		return strings.Contains(e.log.String(), "may no longer view was announced deleted")
	})
	e.withdrawn(token)
}

// A text channel made an announcement channel: a moderator may now
// publish any message of it, the public answers posted there among them,
// to the servers that follow it, whose members no rule of the bot knows
// of; no public answer is posted in one (publicFilter), and one posted
// before the change is withdrawn. An answer elsewhere stays.
func TestPublicAnswerWithdrawnWhenItsChannelBecomesAnAnnouncementChannel(t *testing.T) {
	const lounge = 2050
	open := discord.Channel{ID: lounge, Type: discord.GuildText, Name: "lounge", ParentID: category}
	e := setup(t, func(d *discordtest.Discord) { d.AddChannels(open) })
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(lounge, "boiler broke", boilerBroke)
	stays := e.publicAnswer(general, "boiler broke", boilerBroke)
	news := open
	news.Type = discord.GuildAnnouncement
	e.discord.UpdateChannel(news)
	e.withdrawn(token)
	if r, _ := e.discord.ReplyTo(stays); r.Deleted || !strings.Contains(r.Embeds, boilerBroke) {
		t.Errorf("the answer in #general was withdrawn: %+v", r)
	}
}

// Past the record's bound the oldest public answers are withdrawn, with
// their own line, not forgotten: an answer dropped from the record could
// never be withdrawn, whatever it quotes is deleted later. Withdrawn
// answers leave the record first.
func TestOldestPublicAnswersWithdrawnPastTheRecordsBound(t *testing.T) {
	dir := t.TempDir()
	s, err := loadAnswers(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	s.max = 3
	var mu sync.Mutex
	edited := map[api.ID]bool{} // reply -> expired
	s.edit = func(a *answer) error {
		mu.Lock()
		defer mu.Unlock()
		edited[a.Reply] = a.Expired
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.run(ctx)
	s.record(1001, 10, 1, &quotes{messages: []api.ID{501}, channel: []api.ID{10}})
	s.remove(&removal{messages: setOf([]api.ID{501})}) // withdrawn for a deletion
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(edited)
	}
	waitFor(t, "the deletion's withdrawal", func() bool { return count() == 1 })
	for i := range api.ID(4) {
		s.record(1002+i, 10, 1, &quotes{messages: []api.ID{502 + i}, channel: []api.ID{10}})
	}
	// Four shown past a bound of three: the oldest, 1002, withdrawn.
	waitFor(t, "the oldest answer withdrawn", func() bool { return count() == 2 })
	mu.Lock()
	if exp, ok := edited[1002]; !ok || !exp || edited[1001] {
		t.Errorf("withdrawn (reply: for its age) %v; want 1001 for the deletion and 1002 for its age", edited)
	}
	mu.Unlock()
	for _, r := range []api.ID{1003, 1004, 1005} {
		if s.withdrawn(r) {
			t.Errorf("answer %d, among the newest three, withdrawn", r)
		}
	}
	// The record stays bounded: withdrawn answers leave it first.
	s.record(1006, 10, 1, &quotes{messages: []api.ID{506}, channel: []api.ID{10}})
	waitFor(t, "the next oldest withdrawn", func() bool { return count() == 3 })
	s.mu.Lock()
	n := len(s.list)
	s.mu.Unlock()
	if n > 4 {
		t.Errorf("the record holds %d answers; want at most the bound and the one being withdrawn", n)
	}
}

// Discord's edit of a public answer answered a bare 404 (a proxy's, a
// route's: not Unknown Message or Unknown Channel): the withdrawal took it
// for a reply already gone, recorded the answer withdrawn, and the reply
// went on showing the deleted message, never to be withdrawn again.
func TestPublicAnswerWithdrawnDespiteABare404(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke)
	e.discord.Fault("PATCH", fmt.Sprintf("/channels/%d/messages/", general), 404, 1)
	e.discord.Delete(general, historyMessage(t, boilerBroke).ID)
	e.withdrawn(token)
}

// A public answer whose withdrawal Discord refuses because the bot may
// not view its channel for now (Missing Access, to edit as to delete;
// Discord sends the channel's stand-in) is withdrawn once the bot may
// view it again, not only at the next start: the opted-out author's
// words would go on showing meanwhile.
func TestPublicAnswerWithdrawnWhenItsChannelIsSeenAgain(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(general, "boiler broke", boilerBroke) // bob's words
	ch := fakeGuild().Channels[1]
	e.discord.UpdateChannel(hiddenFromBot(ch))
	waitFor(t, "the stand-in in the bot's state", func() bool {
		c, err := e.bot.state.Cabinet.Channel(general)
		return err == nil && obfuscated(c)
	})
	_, edit, _ := e.interaction(bob, 2, map[string]any{"id": "9010", "name": "optout", "type": 1})
	e.interaction(bob, 3, map[string]any{"custom_id": buttons(edit)[0], "component_type": 2})
	waitFor(t, "the refused withdrawal", func() bool { return strings.Contains(e.log.String(), "cannot withdraw a public answer") })
	e.discord.UpdateChannel(ch)
	e.withdrawn(token)
}

// A public answer in #staff quoting #general is withdrawn once Discord
// hides #general from the bot: its stand-in's overwrites are Discord's,
// so who reads #general now cannot be told (recheckAnswers, mayShowIn).
func TestPublicAnswerWithdrawnWhenAQuotedChannelTurnsIntoAStandIn(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	token := e.publicAnswer(staff, "boiler broke", boilerBroke) // #general's
	e.discord.UpdateChannel(hiddenFromBot(fakeGuild().Channels[1]))
	e.withdrawn(token)
}
