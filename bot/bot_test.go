package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/bot/discordtest"
	"dsearch/shared/api"
	"dsearch/shared/client"
)

// The server of the end-to-end test: everyone reads #general and its
// thread; only the staff role reads #staff.
const (
	guildID                = 1000
	staffRole              = 1001
	general, staff, thread = 2000, 2001, 2002
	category               = 2003
	botUser, alice, bob    = 500, 601, 602
	owner                  = 9999
	appID                  = 7000
)

var t0 = time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)

func user(id discord.UserID, name string) discord.User {
	return discord.User{ID: id, Username: name, DisplayName: strings.ToUpper(name[:1]) + name[1:]}
}

func fakeGuild() discordtest.Guild {
	read := discord.PermissionViewChannel | discord.PermissionReadMessageHistory | discord.PermissionSendMessages
	return discordtest.Guild{
		Guild: discord.Guild{ID: guildID, Name: "friends", OwnerID: owner, Roles: []discord.Role{
			{ID: guildID, Name: "@everyone", Permissions: read},
			{ID: staffRole, Name: "staff", Position: 1},
		}},
		Channels: []discord.Channel{
			{ID: category, Type: discord.GuildCategory, Name: "text"},
			{ID: general, Type: discord.GuildText, Name: "general", ParentID: category},
			{ID: staff, Type: discord.GuildText, Name: "staff", ParentID: category, Overwrites: []discord.Overwrite{
				{ID: guildID, Type: discord.OverwriteRole, Deny: discord.PermissionViewChannel},
				{ID: staffRole, Type: discord.OverwriteRole, Allow: discord.PermissionViewChannel},
			}},
			{ID: thread, Type: discord.GuildPublicThread, Name: "trip plans", ParentID: general},
		},
		Members: []discord.Member{
			{User: user(botUser, "dsearch"), RoleIDs: []discord.RoleID{staffRole}},
			{User: user(alice, "alice"), RoleIDs: []discord.RoleID{staffRole}},
			{User: user(bob, "bob")},
		},
	}
}

func message(ch discord.ChannelID, author discord.User, at time.Time, text string) discord.Message {
	return discord.Message{ID: discord.MessageID(discord.NewSnowflake(at)), ChannelID: ch, GuildID: guildID,
		Author: author, Content: text, Timestamp: discord.NewTimestamp(at), Type: discord.DefaultMessage}
}

// history: 250 small-talk messages in #general (three pages), a boiler
// conversation in #general and in #staff, and a thread.
func history() []discord.Message {
	var out []discord.Message
	a, b := user(alice, "alice"), user(bob, "bob")
	for i := range 250 {
		out = append(out, message(general, a, t0.Add(time.Duration(i)*7*time.Minute), fmt.Sprintf("small talk number %d about the weather", i)))
	}
	day := t0.Add(40 * 24 * time.Hour)
	out = append(out,
		message(general, b, day, "the boiler broke again, no hot water this morning"),
		message(general, a, day.Add(time.Minute), "call the landlord about the boiler"),
		message(staff, a, day.Add(2*time.Hour), "secret: the boiler budget for the office is approved"),
		message(staff, a, day.Add(2*time.Hour+time.Minute), "keep the boiler budget between staff"),
		message(thread, b, day.Add(5*time.Hour), "lighthouse trip on saturday?"),
		message(general, b, day.Add(3*24*time.Hour), "the plumber says the boiler needs a new valve"),
		message(general, a, day.Add(9*24*time.Hour), "boiler works again, hot showers are back"),
	)
	return out
}

// fakeOllama answers plans with the question's words and summaries with a
// fixed sentence citing the result that says it ([1] when none does):
// searchd refuses a summary citing a result that does not.
func fakeOllama(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Format   string `json:"format"`
			Messages []struct{ Content string }
		}
		json.NewDecoder(r.Body).Decode(&req)
		cite := "1"
		for _, m := range req.Messages {
			if i := strings.Index(m.Content, "the boiler broke again"); i >= 0 {
				if h := regexp.MustCompile(`(?m)^\[(\d+)\] `).FindAllStringSubmatch(m.Content[:i], -1); len(h) > 0 {
					cite = h[len(h)-1][1]
				}
			}
		}
		content := "The boiler broke and the landlord was called [" + cite + "]."
		if req.Format == "json" {
			content = `{"subqueries":["boiler broke","boiler budget"],"keywords":["boiler"]}`
		}
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "created_at": time.Now().Format(time.RFC3339),
			"message": map[string]string{"role": "assistant", "content": content}, "done": true})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// searchd runs the real searchd binary on a real socket.
type searchd struct {
	t               *testing.T
	bin, data, sock string
	ollama          string
	cmd             *exec.Cmd
	exited          chan struct{}
}

var (
	searchdOnce sync.Once
	searchdBin  string
	searchdErr  error
)

// buildSearchd builds the searchd binary once for all tests (or takes
// DSEARCH_SEARCHD_BIN).
func buildSearchd(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("DSEARCH_SEARCHD_BIN"); bin != "" {
		return bin
	}
	searchdOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dsearch-searchd")
		if err != nil {
			searchdErr = err
			return
		}
		searchdBin = filepath.Join(dir, "searchd")
		if out, err := exec.Command("go", "build", "-o", searchdBin, "dsearch/searchd/cmd/searchd").CombinedOutput(); err != nil {
			searchdErr = fmt.Errorf("building searchd: %v\n%s", err, out)
		}
	})
	if searchdErr != nil {
		t.Fatal(searchdErr)
	}
	return searchdBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if searchdBin != "" {
		os.RemoveAll(filepath.Dir(searchdBin))
	}
	os.Exit(code)
}

func (s *searchd) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "serve", "--data", s.data, "--socket", s.sock, "--ollama-url", s.ollama,
		"--plan-timeout", "5s", "--log-level", "warn")
	s.cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+s.data)
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.exited = make(chan struct{})
	go func() { s.cmd.Wait(); close(s.exited) }()
	c := client.New(s.sock)
	for i := 0; ; i++ {
		if _, err := c.Health(context.Background()); err == nil {
			return
		} else if i == 200 {
			s.t.Fatalf("searchd did not come up: %v", err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (s *searchd) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// waitFor polls cond until it holds or fails the test after 15 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lockedBuffer collects the bot's log.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type env struct {
	t       *testing.T
	log     *lockedBuffer
	discord *discordtest.Discord
	sd      *searchd
	c       *client.Client
	cfg     Config
	bot     *Bot
	cancel  context.CancelFunc
	done    chan error // Run's error
	seq     int
	mu      sync.Mutex
	locale  string // the members' Discord language; en-US when empty
}

// setup starts searchd, a fake Discord and a bot; configure may hold
// func(*Config) and func(*discordtest.Discord), applied before the bot
// starts.
func setup(t *testing.T, configure ...any) *env {
	if testing.Short() {
		t.Skip("builds and runs searchd")
	}
	dir, err := os.MkdirTemp("", "dsb") // short: socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sd := &searchd{t: t, bin: buildSearchd(t), data: filepath.Join(dir, "data"), sock: filepath.Join(dir, "run", "searchd.sock"),
		ollama: fakeOllama(t).URL}
	sd.start()
	t.Cleanup(sd.stop)
	d := discordtest.New(t, fakeGuild(), discord.User{ID: botUser, Username: "dsearch", Bot: true}, appID)
	d.AddHistory(history()...)
	logs := &lockedBuffer{}
	cfg := Config{Token: discordtest.Token, Socket: sd.sock, SpoolDir: filepath.Join(dir, "spool"),
		Backfill: true, PageSize: 2, FlushEvery: 30 * time.Millisecond, Transport: d.Transport(),
		Log: slog.New(slog.NewTextHandler(logs, nil)), ReconnectDelay: 50 * time.Millisecond, RetryAfter: 200 * time.Millisecond}
	for _, f := range configure {
		switch f := f.(type) {
		case func(*Config):
			f(&cfg)
		case func(*discordtest.Discord):
			f(d)
		default:
			t.Fatalf("setup: cannot configure with %T", f)
		}
	}
	e := &env{t: t, log: logs, discord: d, sd: sd, c: client.New(sd.sock), cfg: cfg}
	t.Cleanup(e.noMessageTextLogged) // after the bot stopped: its whole log
	e.start()
	t.Cleanup(func() {
		if err := e.stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	d.WaitReady()
	return e
}

// noMessageTextLogged fails the test if the bot's log (at info level, as
// it runs) holds the text of a message of the history: whatever a test
// made the bot do, message text is never logged.
func (e *env) noMessageTextLogged() {
	log := e.log.String()
	for _, m := range history() {
		if strings.Contains(log, m.Content) {
			e.t.Errorf("the bot's log holds the text of message %d: %q", m.ID, m.Content)
			return
		}
	}
}

// start runs a bot on the env's fake Discord, searchd and spool.
func (e *env) start() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b, err := New(ctx, e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.bot, e.cancel, e.done = b, cancel, make(chan error, 1)
	go func() { e.done <- b.Run(ctx) }()
}

// stop stops the bot (if it still runs) and returns Run's error.
func (e *env) stop() error {
	if e.done == nil {
		return nil
	}
	e.cancel()
	defer func() { e.done = nil }()
	select {
	case err := <-e.done:
		return err
	case <-time.After(10 * time.Second):
		return errors.New("the bot did not stop")
	}
}

// backfilled waits until searchd holds every message of the history.
func (e *env) backfilled(want int64) {
	e.t.Helper()
	waitFor(e.t, "backfill", func() bool {
		st, err := e.c.Stats(context.Background())
		return err == nil && st.Messages == want
	})
}

func TestBackfillPagesEveryReadableChannel(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	for _, ch := range []api.ID{general, staff, thread} {
		waitFor(t, "checkpoint", func() bool {
			cp, err := e.c.Backfill(context.Background(), ch)
			return err == nil && cp.Complete
		})
	}
	pages := e.discord.Calls("GET", "/channels/2000/messages")
	if len(pages) < 3 {
		t.Errorf("%d pages of #general, want ≥ 3 for 254 messages", len(pages))
	}
	for _, p := range e.discord.Calls("GET", "/messages") {
		if p.Query.Get("limit") != "100" {
			t.Errorf("page request %s?%s: want limit=100 (never unbounded)", p.Path, p.Query.Encode())
		}
	}
	if len(e.discord.Calls("GET", "/channels/2003/messages")) != 0 {
		t.Error("the bot paged a category")
	}
	// Names and threads arrived with their parents.
	m, err := e.c.Message(context.Background(), api.ID(history()[254].ID), 0, 0) // the thread's
	if err != nil || m.Message.ChannelID != thread || !strings.Contains(m.Message.URL, "/1000/2002/") {
		t.Errorf("thread message: %+v, %v", m, err)
	}
	if cmds := e.discord.Calls("PUT", "/applications/7000/guilds/1000/commands"); len(cmds) != 1 ||
		!strings.Contains(string(cmds[0].Body), `"query"`) || !strings.Contains(string(cmds[0].Body), "Find related conversations") {
		t.Errorf("command registration: %+v", cmds)
	}

	// A backfill cut short resumes from searchd's checkpoint.
	ctx := context.Background()
	h := history()
	stopped := h[100].ID
	if err := e.c.SetBackfill(ctx, &api.Backfill{Channel: general, Before: api.ID(stopped)}); err != nil {
		t.Fatal(err)
	}
	before := len(e.discord.Calls("GET", "/channels/2000/messages"))
	ch, _ := e.bot.state.Channel(general)
	if _, err := e.bot.history(ctx, *ch); err != nil {
		t.Fatal(err)
	}
	calls := e.discord.Calls("GET", "/channels/2000/messages")[before:]
	if len(calls) < 1 || calls[0].Query.Get("before") != stopped.String() {
		t.Errorf("resume: first requests %v, want before %s", calls, stopped)
	}
	if cp, err := e.c.Backfill(ctx, general); err != nil || !cp.Complete {
		t.Errorf("after resuming: %+v, %v", cp, err)
	}
}

// interaction dispatches a slash command, button press or message
// command from a member and returns the callback and the final edit.
func (e *env) interaction(member discord.UserID, kind int, data map[string]any) (callback, edit map[string]any, deferredIn time.Duration) {
	e.t.Helper()
	return e.interactionIn(general, member, kind, data)
}

// interactionIn is interaction in a channel. The member data is the
// member as the fake Discord knows them at that moment, as Discord sends.
func (e *env) interactionIn(channel discord.ChannelID, member discord.UserID, kind int, data map[string]any) (callback, edit map[string]any, deferredIn time.Duration) {
	e.t.Helper()
	e.mu.Lock()
	e.seq++
	n := e.seq
	locale := e.locale
	e.mu.Unlock()
	if locale == "" {
		locale = "en-US"
	}
	token := fmt.Sprintf("token-%d", n)
	m, _ := e.discord.Member(member)
	start := time.Now()
	e.discord.Dispatch("INTERACTION_CREATE", map[string]any{"id": fmt.Sprint(8000 + n), "application_id": fmt.Sprint(appID),
		"type": kind, "data": data, "guild_id": fmt.Sprint(guildID), "channel_id": fmt.Sprint(channel), "member": m,
		"token": token, "version": 1, "locale": locale})
	cb := e.discord.WaitCalls("POST", "/interactions/"+fmt.Sprint(8000+n)+"/"+token+"/callback", 1)[0]
	json.Unmarshal(cb.Body, &callback)
	deferredIn = cb.At.Sub(start)
	if t, _ := callback["type"].(float64); t == 4 { // answered at once
		return callback, nil, deferredIn
	}
	ed := e.discord.WaitCalls("PATCH", "/webhooks/7000/"+token+"/messages/@original", 1)[0]
	json.Unmarshal(ed.Body, &edit)
	return callback, edit, deferredIn
}

func query(question string, extra ...map[string]any) map[string]any {
	opts := []map[string]any{{"name": "question", "type": 3, "value": question}}
	opts = append(opts, extra...)
	return map[string]any{"id": "9000", "name": "query", "type": 1, "options": opts}
}

func embedText(edit map[string]any) string {
	b, _ := json.Marshal(edit["embeds"])
	return string(b)
}

func TestQueryFollowsPermissionsAndPages(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))

	// Alice (staff) sees #staff's boiler budget; the answer cites the
	// result that says the boiler broke.
	cb, edit, took := e.interaction(alice, 2, query("what happened with the boiler?"))
	if cb["type"] != 5.0 || cb["data"].(map[string]any)["flags"] != 64.0 {
		t.Errorf("callback %v: want a deferred, ephemeral (flags 64) reply", cb)
	}
	if took > 3*time.Second {
		t.Errorf("deferred after %v; Discord allows 3 s", took)
	}
	text := embedText(edit)
	for _, want := range []string{"The boiler broke and the landlord was called [", "https://discord.com/channels/1000/",
		"[1] ", "boiler broke", "llm plan"} {
		if !strings.Contains(text, want) {
			t.Errorf("alice's answer lacks %q: %s", want, text)
		}
	}
	seen := map[string]bool{}
	pages := []string{text}
	for button := buttonID(edit); button != ""; {
		_, next, _ := e.interaction(alice, 3, map[string]any{"custom_id": button, "component_type": 2})
		pages = append(pages, embedText(next))
		button = buttonID(next)
		if len(pages) > 10 {
			t.Fatal("More never ends")
		}
	}
	all := strings.Join(pages, "\n")
	if len(pages) < 2 || !strings.Contains(all, "[4] ") {
		t.Errorf("%d pages; want More to reach result [4]: %s", len(pages), all)
	}
	if !strings.Contains(all, "/1000/2001/") {
		t.Errorf("alice never saw #staff: %s", all)
	}
	for _, p := range pages {
		if seen[p] {
			t.Error("a page repeated")
		}
		seen[p] = true
	}

	// Bob (no staff role) asks the same: nothing from #staff, anywhere.
	_, edit, _ = e.interaction(bob, 2, query("what happened with the boiler?"))
	pages = []string{embedText(edit)}
	for button := buttonID(edit); button != ""; {
		// Alice cannot page bob's results.
		if cb, _, _ := e.interaction(alice, 3, map[string]any{"custom_id": button, "component_type": 2}); cb["type"] != 4.0 ||
			!strings.Contains(fmt.Sprint(cb["data"]), "Only the person who asked") {
			t.Errorf("alice pressed bob's More: %v", cb)
		}
		_, next, _ := e.interaction(bob, 3, map[string]any{"custom_id": button, "component_type": 2})
		pages = append(pages, embedText(next))
		button = buttonID(next)
	}
	for _, p := range pages {
		if strings.Contains(p, "/1000/2001/") || strings.Contains(p, "secret") {
			t.Errorf("bob saw #staff: %s", p)
		}
	}
	// Naming #staff outright is refused in one plain line.
	_, edit, _ = e.interaction(bob, 2, query("boiler", map[string]any{"name": "channel", "type": 7, "value": fmt.Sprint(staff)}))
	if edit["content"] != "Sorry: you cannot read that channel." {
		t.Errorf("bob naming #staff: %v", edit)
	}
	// A bad date is one plain line too.
	_, edit, _ = e.interaction(alice, 2, query("boiler", map[string]any{"name": "since", "type": 3, "value": "last tuesday"}))
	if c, _ := edit["content"].(string); !strings.HasPrefix(c, "That did not work: since:") {
		t.Errorf("bad date: %v", edit)
	}
	// New messages kill the cursor: More says so beside the page it leaves.
	_, edit, _ = e.interaction(alice, 2, query("what happened with the boiler?"))
	button := buttonID(edit)
	fresh := message(general, user(bob, "bob"), t0.Add(300*24*time.Hour), "fresh news")
	e.discord.Dispatch("MESSAGE_CREATE", fresh)
	waitFor(t, "the new message", func() bool {
		_, err := e.c.Message(context.Background(), api.ID(fresh.ID), 0, 0)
		return err == nil
	})
	e.discord.Dispatch("INTERACTION_CREATE", map[string]any{"id": "8999", "application_id": fmt.Sprint(appID), "type": 3,
		"data": map[string]any{"custom_id": button, "component_type": 2}, "guild_id": fmt.Sprint(guildID),
		"channel_id": fmt.Sprint(general), "member": fakeGuild().Members[1], "token": "stale", "version": 1})
	follow := e.discord.WaitCalls("POST", "/webhooks/7000/stale", 1)[0]
	if !strings.Contains(string(follow.Body), "messages were added, edited or deleted since this cursor was made") || !strings.Contains(string(follow.Body), `"flags":64`) {
		t.Errorf("stale More: %s", follow.Body)
	}
	if len(e.discord.Calls("PATCH", "/webhooks/7000/stale")) != 0 {
		t.Error("a stale More replaced the page it was on")
	}
	// A message bob cannot read leaves his More working: his cursor is
	// checked against his channels alone, so pressing More tells him
	// nothing of #staff.
	_, edit, _ = e.interaction(bob, 2, query("what happened with the boiler?"))
	if button = buttonID(edit); button == "" {
		t.Fatalf("bob's answer has no More: %v", edit)
	}
	secret := message(staff, user(alice, "alice"), t0.Add(301*24*time.Hour), "staff only news")
	e.discord.Dispatch("MESSAGE_CREATE", secret)
	waitFor(t, "the #staff message", func() bool {
		_, err := e.c.Message(context.Background(), api.ID(secret.ID), 0, 0)
		return err == nil
	})
	if _, next, _ := e.interaction(bob, 3, map[string]any{"custom_id": button, "component_type": 2}); len(embedText(next)) == 0 {
		t.Errorf("bob's More after a #staff message: %v", next)
	}
	// public:true is not ephemeral.
	cb, _, _ = e.interaction(alice, 2, query("boiler", map[string]any{"name": "public", "type": 5, "value": true}))
	if f, _ := cb["data"].(map[string]any)["flags"].(float64); f != 0 {
		t.Errorf("public reply flags %v", f)
	}
}

func buttonID(edit map[string]any) string {
	b, _ := json.Marshal(edit["components"])
	var rows []struct {
		Components []struct {
			CustomID string `json:"custom_id"`
		} `json:"components"`
	}
	json.Unmarshal(b, &rows)
	for _, r := range rows {
		for _, c := range r.Components {
			if strings.HasPrefix(c.CustomID, morePrefix) {
				return c.CustomID
			}
		}
	}
	return ""
}

func TestCatchupAndRelated(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	_, edit, _ := e.interaction(bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{{"name": "since", "type": 3, "value": "2025-07-01"}}})
	if text := embedText(edit); !strings.Contains(text, "Catch-up") || !strings.Contains(text, "https://discord.com/channels/1000/2000/") {
		t.Errorf("catch-up: %s", text)
	}
	_, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
		"options": []map[string]any{{"name": "channel", "type": 7, "value": fmt.Sprint(staff)}}})
	if edit["content"] != "Sorry: you cannot read that channel." {
		t.Errorf("bob's catch-up of #staff: %v", edit)
	}
	target := message(general, user(bob, "bob"), t0.Add(100*24*time.Hour), "is the boiler fixed yet")
	_, edit, _ = e.interaction(bob, 2, map[string]any{"id": "9002", "name": cmdRelated, "type": 3,
		"target_id": target.ID.String(), "resolved": map[string]any{"messages": map[string]any{target.ID.String(): target}}})
	text := embedText(edit)
	if !strings.Contains(text, "Related conversations") || !strings.Contains(text, "boiler broke again") || strings.Contains(text, "budget") {
		t.Errorf("related for bob: %s", text)
	}
}

func TestLiveSyncAndSpoolReplay(t *testing.T) {
	e := setup(t)
	total := int64(len(history()))
	e.backfilled(total)
	ctx := context.Background()
	at := t0.Add(200 * 24 * time.Hour)
	create := message(general, user(alice, "alice"), at, "moving to busan next spring")
	e.discord.Dispatch("MESSAGE_CREATE", map[string]any{"id": create.ID, "channel_id": create.ChannelID, "guild_id": guildID,
		"author": create.Author, "content": create.Content, "timestamp": create.Timestamp, "type": 0,
		"member": map[string]any{"nick": "ally", "roles": []string{}}, "mentions": []any{}, "attachments": []any{}})
	waitFor(t, "the new message", func() bool { _, err := e.c.Message(ctx, api.ID(create.ID), 0, 0); return err == nil })
	edited := create
	edited.Content, edited.EditedTimestamp = "moving to busan next summer", discord.NewTimestamp(at.Add(time.Minute))
	e.discord.Dispatch("MESSAGE_UPDATE", edited)
	waitFor(t, "the edit", func() bool {
		m, err := e.c.Message(ctx, api.ID(create.ID), 0, 0)
		return err == nil && m.Message.Content == edited.Content
	})
	e.discord.Dispatch("MESSAGE_DELETE", map[string]any{"id": create.ID, "channel_id": general, "guild_id": guildID})
	waitFor(t, "the deletion", func() bool { _, err := e.c.Message(ctx, api.ID(create.ID), 0, 0); return err != nil })
	if r, err := e.c.Search(ctx, map[string][]string{"q": {"busan"}, "mode": {"lexical"}}); err != nil || len(r.Results) != 0 {
		t.Errorf("a deleted message is still found: %+v, %v", r, err)
	}

	// Messages and their edits in quick succession: every edit wins (events
	// handled out of order would let a message overwrite its edit).
	var quick []discord.Message
	for i := range 20 {
		m := message(general, user(bob, "bob"), at.Add(time.Hour+time.Duration(i)*time.Second), "first words")
		edit := m
		edit.Content, edit.EditedTimestamp = "second words", discord.NewTimestamp(at.Add(2*time.Hour))
		e.discord.Dispatch("MESSAGE_CREATE", m)
		e.discord.Dispatch("MESSAGE_UPDATE", edit)
		quick = append(quick, m)
	}
	waitFor(t, "the quick edits", func() bool {
		for _, m := range quick {
			got, err := e.c.Message(ctx, api.ID(m.ID), 0, 0)
			if err != nil || got.Message.Content != "second words" {
				return false
			}
		}
		return true
	})
	total += int64(len(quick))

	// searchd goes away; events wait in the spool, in order.
	e.sd.stop()
	var sent []discord.Message
	for i := range 5 {
		m := message(thread, user(bob, "bob"), at.Add(time.Duration(i+2)*time.Minute), fmt.Sprintf("offline message %d", i))
		sent = append(sent, m)
		e.discord.Dispatch("MESSAGE_CREATE", m)
	}
	e.discord.Dispatch("MESSAGE_DELETE_BULK", map[string]any{"ids": []string{sent[3].ID.String(), sent[4].ID.String()},
		"channel_id": thread, "guild_id": guildID})
	waitFor(t, "spooled batches", func() bool { return e.bot.spool.Len() > 0 })
	if _, edit, _ := e.interaction(alice, 2, query("boiler")); edit["content"] != "Search is down right now (searchd is not running). Try again in a minute." {
		t.Errorf("a question while searchd is down: %v", edit)
	}
	e.sd.start()
	waitFor(t, "replay", func() bool { return e.bot.spool.Len() == 0 })
	waitFor(t, "replayed messages", func() bool {
		st, err := e.c.Stats(ctx)
		return err == nil && st.Messages == total+3
	})
	for i, m := range sent {
		_, err := e.c.Message(ctx, api.ID(m.ID), 0, 0)
		if (i < 3) != (err == nil) {
			t.Errorf("message %d after replay: %v", i, err)
		}
	}
	// The outage was logged, never the messages.
	log := e.log.String()
	if !strings.Contains(log, "searchd unavailable") {
		t.Errorf("the outage left no trace in the log:\n%s", log)
	}
	for _, text := range []string{"busan", "offline message", "small talk", "boiler"} {
		if strings.Contains(log, text) {
			t.Errorf("message text %q reached the log", text)
		}
	}
}

func TestBadTokenIsExplained(t *testing.T) {
	d := discordtest.New(t, fakeGuild(), discord.User{ID: botUser, Username: "dsearch", Bot: true}, appID)
	_, err := New(context.Background(), Config{Token: "wrong", Socket: "/nonexistent", SpoolDir: t.TempDir(), Transport: d.Transport()})
	if err == nil || !strings.Contains(err.Error(), "refused the bot token") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("bad token: %v", err)
	}
}

func TestGuildOutsideTheAllowlistIsIgnored(t *testing.T) {
	e := setup(t, func(c *Config) { c.Guilds = []discord.GuildID{4242} })
	e.discord.Dispatch("MESSAGE_CREATE", message(general, user(alice, "alice"), t0, "not for this bot"))
	if cb, _, _ := e.interaction(alice, 2, query("boiler")); cb["type"] != 4.0 || !strings.Contains(fmt.Sprint(cb["data"]), "not in dsearch's allowlist") {
		t.Errorf("query from another server: %v", cb)
	}
	time.Sleep(100 * time.Millisecond) // a flush or two
	if st, err := e.c.Stats(context.Background()); err != nil || st.Messages != 0 || st.Guilds != 0 {
		t.Errorf("searchd got data from a server outside the allowlist: %+v, %v", st, err)
	}
	if len(e.discord.Calls("PUT", "/commands")) != 0 || len(e.discord.Calls("GET", "/messages")) != 0 {
		t.Error("the bot registered commands or paged history in a server outside the allowlist")
	}
}
