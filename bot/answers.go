package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	dapi "github.com/diamondburned/arikawa/v3/api"
	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/utils/httputil"
	"github.com/diamondburned/arikawa/v3/utils/json/option"

	"dsearch/shared/api"
)

// A public answer stays in its channel for good, quoting members'
// messages (previews, and the LLM's summary of them). What is deleted is
// gone (docs/design.md), so the bot records what each public answer it
// posted quotes, by ID alone (SPOOL/answers), and withdraws the answer,
// editing it into one line, once one of those messages is deleted, its
// channel or thread deleted, or its author opts out. The record is on
// disk: a restart keeps it, and what the restart's catch-up finds
// deleted while the bot was away withdraws the answers as a live
// deletion does.

const (
	answersFile = "answers"
	// maxAnswers bounds SPOOL/answers: the newest answers are kept (about
	// 1.5 kB each, at most 35 messages an answer).
	maxAnswers = 2000
	// recentFor is how long removals are remembered for answers recorded
	// after them (a message deleted while its answer was being written).
	recentFor = 20 * time.Minute
)

// answer is what one public reply quotes: IDs only, never text.
type answer struct {
	Reply    api.ID    `json:"reply"`
	Channel  api.ID    `json:"channel"` // where the reply is
	Guild    api.ID    `json:"guild"`
	At       time.Time `json:"at"`
	Korean   bool      `json:"ko,omitempty"`
	Messages []api.ID  `json:"messages,omitempty"`
	Authors  []api.ID  `json:"authors,omitempty"`
	// Channels are the quoted messages' channels and, for a thread, its
	// parent (deleting a channel deletes its threads).
	Channels []api.ID `json:"channels,omitempty"`
	// Withdrawn: edited into the withdrawal line (or gone); kept so that
	// a More press landing after it is undone again.
	Withdrawn bool `json:"withdrawn,omitempty"`
	// Pending: to withdraw. Failed: Discord refused it; tried again at
	// the next start, not at every later withdrawal.
	Pending bool `json:"pending,omitempty"`
	Failed  bool `json:"failed,omitempty"`
}

// quotes is what a public reply shows, before it is posted.
type quotes struct {
	korean                     bool
	messages, authors, channel []api.ID
	asked                      time.Time // when searchd was asked for the page
}

// removed is what a batch searchd took, or an opt-out, took away.
type removed struct {
	messages, channels, guilds, authors []api.ID
	// edited are messages whose text searchd changed: an answer asked for
	// before showed the old text, and an edit may take quoted text out.
	edited []api.ID
}

func (r removed) empty() bool {
	return len(r.messages)+len(r.channels)+len(r.guilds)+len(r.authors)+len(r.edited) == 0
}

type answers struct {
	path string
	log  *slog.Logger
	edit func(a *answer) error // withdraws a reply on Discord

	mu     sync.Mutex
	list   []*answer // oldest first
	recent recentRemovals
	work   chan struct{}
}

// recentRemovals are the removals of the last recentFor, each ID with
// when it was removed.
type recentRemovals struct {
	messages, channels, guilds, authors, edited map[api.ID]time.Time
}

func (rr *recentRemovals) add(r removed, now time.Time) {
	for _, k := range []struct {
		m   *map[api.ID]time.Time
		ids []api.ID
	}{{&rr.messages, r.messages}, {&rr.channels, r.channels}, {&rr.guilds, r.guilds}, {&rr.authors, r.authors}, {&rr.edited, r.edited}} {
		if *k.m == nil {
			*k.m = map[api.ID]time.Time{}
		}
		for _, id := range k.ids {
			(*k.m)[id] = now
		}
	}
}

// since drops what is older than recentFor and returns the rest; an edit
// only if taken after asked (an answer asked for later shows its text).
func (rr *recentRemovals) since(asked time.Time) removed {
	var r removed
	for _, k := range []struct {
		m     map[api.ID]time.Time
		ids   *[]api.ID
		after time.Time
	}{{rr.messages, &r.messages, time.Time{}}, {rr.channels, &r.channels, time.Time{}}, {rr.guilds, &r.guilds, time.Time{}},
		{rr.authors, &r.authors, time.Time{}}, {rr.edited, &r.edited, asked}} {
		for id, at := range k.m {
			if time.Since(at) > recentFor {
				delete(k.m, id)
			} else if at.After(k.after) {
				*k.ids = append(*k.ids, id)
			}
		}
	}
	return r
}

func loadAnswers(dir string, log *slog.Logger) (*answers, error) {
	s := &answers{path: filepath.Join(dir, answersFile), log: log, work: make(chan struct{}, 1)}
	data, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &s.list); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return s, nil
}

// save writes the record (0600) and syncs it, in place of the old one.
// s.mu is held.
func (s *answers) save() error {
	if len(s.list) > maxAnswers {
		s.list = slices.Delete(s.list, 0, len(s.list)-maxAnswers)
	}
	data, err := json.Marshal(s.list)
	if err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(s.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (s *answers) saveLogged() {
	if err := s.save(); err != nil {
		s.log.Error("cannot write SPOOL/answers: what public answers quote may not be withdrawn after a restart", "err", err)
	}
}

func (a *answer) quotes(r removed) bool {
	hit := func(have, gone []api.ID) bool {
		for _, id := range gone {
			if slices.Contains(have, id) {
				return true
			}
		}
		return false
	}
	return hit(a.Messages, r.messages) || hit(a.Messages, r.edited) || hit(a.Channels, r.channels) || slices.Contains(r.channels, a.Channel) ||
		slices.Contains(r.guilds, a.Guild) || hit(a.Authors, r.authors)
}

// record notes a public reply posted (or edited to another page): what it
// quotes now. A reply already withdrawn, or quoting what was removed
// while it was being written, is withdrawn (again) at once.
func (s *answers) record(reply, channel, guild api.ID, q *quotes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &answer{Reply: reply, Channel: channel, Guild: guild, At: time.Now().UTC(), Korean: q.korean,
		Messages: q.messages, Authors: q.authors, Channels: q.channel}
	i := slices.IndexFunc(s.list, func(x *answer) bool { return x.Reply == reply })
	if i >= 0 {
		// A page edited in while the reply is withdrawn, or being
		// withdrawn, is withdrawn again (run tells the two records apart
		// by At).
		a.Withdrawn = s.list[i].Withdrawn || s.list[i].Pending
		s.list = slices.Delete(s.list, i, i+1)
	}
	s.list = append(s.list, a)
	if a.Withdrawn || a.quotes(s.recent.since(q.asked)) {
		a.Pending = true
		s.wake()
	}
	s.saveLogged()
}

// remove marks for withdrawal every answer quoting what r removed.
func (s *answers) remove(r removed) {
	if r.empty() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent.add(r, time.Now())
	// The answers in a server the bot left cannot be reached (Discord
	// refuses the bot there): their record goes.
	left := len(s.list)
	s.list = slices.DeleteFunc(s.list, func(a *answer) bool { return slices.Contains(r.guilds, a.Guild) })
	left -= len(s.list)
	n := 0
	for _, a := range s.list {
		if !a.Withdrawn && !a.Pending && a.quotes(r) {
			a.Pending = true
			n++
		}
	}
	if left > 0 {
		s.log.Info("public answers in a server the bot left cannot be withdrawn; their record is dropped", "answers", left)
	}
	if n+left > 0 {
		s.saveLogged()
	}
	if n > 0 {
		s.wake()
	}
}

func (s *answers) wake() {
	select {
	case s.work <- struct{}{}:
	default:
	}
}

// run withdraws the answers marked for it, those left pending by the
// last run first.
func (s *answers) run(ctx context.Context) {
	s.wake()
	for start := true; ; start = false {
		select {
		case <-ctx.Done():
			return
		case <-s.work:
		}
		s.mu.Lock()
		var todo []*answer
		for _, a := range s.list {
			if a.Pending && (!a.Failed || start) {
				c := *a
				todo = append(todo, &c)
			}
		}
		s.mu.Unlock()
		for _, a := range todo {
			err := s.edit(a)
			s.mu.Lock()
			if i := slices.IndexFunc(s.list, func(x *answer) bool { return x.Reply == a.Reply }); i >= 0 {
				cur := s.list[i]
				switch {
				case !cur.At.Equal(a.At):
					// A page was edited in meanwhile: withdrawn again.
					s.wake()
				case err != nil:
					cur.Failed = true
					s.log.Error("cannot withdraw a public answer that quotes a removed message; tried again at the next start",
						"reply", a.Reply, "channel", a.Channel, "err", err)
				default:
					s.log.Info("public answer withdrawn: a message it quoted was removed", "reply", a.Reply, "channel", a.Channel)
					cur.Pending, cur.Withdrawn, cur.Failed = false, true, false
					cur.Messages, cur.Authors, cur.Channels = nil, nil, nil
				}
				s.saveLogged()
			}
			s.mu.Unlock()
		}
	}
}

// withdrawn reports whether the reply was withdrawn (a More press on it
// shows no page).
func (s *answers) withdrawn(reply api.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.list, func(x *answer) bool { return x.Reply == reply })
	return i >= 0 && (s.list[i].Withdrawn || s.list[i].Pending)
}

// withdraw edits a public reply into one line, by channel and message
// ID with the bot's token: interaction tokens die after 15 minutes, and
// Discord lets a bot edit its own non-ephemeral interaction responses
// through Edit Message. Should the edit be refused, the reply is deleted
// (Delete Message: a bot may delete its own messages). A reply or
// channel Discord no longer has (10008, 10003) is done.
func (b *Bot) withdraw(a *answer) error {
	l := en
	if a.Korean {
		l = ko
	}
	ch, id := discord.ChannelID(a.Channel), discord.MessageID(a.Reply)
	_, err := b.state.EditMessageComplex(ch, id, dapi.EditMessageData{
		Content: option.NewNullableString(l.say("withdrawn")), Embeds: &[]discord.Embed{},
		Components: &discord.ContainerComponents{}, AllowedMentions: noPings()})
	if err == nil || gone(err) {
		return nil
	}
	b.log.Warn("Discord refused to edit a public answer; deleting it", "reply", a.Reply, "err", err)
	if err := b.state.DeleteMessage(ch, id, ""); err != nil && !gone(err) {
		return err
	}
	return nil
}

// gone: Discord says the message or its channel is no more.
func gone(err error) bool {
	var he *httputil.HTTPError
	return errors.As(err, &he) && he.Status == 404
}

// quotesOf is what a page of a public answer quotes: each result's
// messages shown (the LLM summarizes those) and its jump link's.
func (b *Bot) quotesOf(resp *api.QueryResponse, l lang) *quotes {
	q := &quotes{korean: l == ko}
	add := func(list *[]api.ID, id api.ID) {
		if id != 0 && !slices.Contains(*list, id) {
			*list = append(*list, id)
		}
	}
	addChannel := func(id api.ID) {
		add(&q.channel, id)
		if c, err := b.state.Cabinet.Channel(discord.ChannelID(id)); err == nil && isThread(c.Type) {
			add(&q.channel, api.ID(c.ParentID))
		}
	}
	for _, r := range resp.Results {
		add(&q.messages, r.MessageID)
		addChannel(r.ChannelID)
		for _, a := range r.AuthorIDs { // named in its header
			add(&q.authors, a)
		}
		for _, m := range r.Previews {
			add(&q.messages, m.ID)
			add(&q.authors, m.AuthorID)
			addChannel(m.ChannelID)
		}
	}
	return q
}

// watched is searchd as the bot sees it: what a batch or an opt-out
// searchd took removes withdraws the public answers quoting it.
type watched struct {
	Searchd
	answers *answers
}

func (w watched) PostMessages(ctx context.Context, mb *api.MessageBatch) (*api.BatchResult, error) {
	res, err := w.Searchd.PostMessages(ctx, mb)
	if err == nil {
		// With every thread of a forgotten channel searchd knows, and the
		// messages whose text it changed: an answer recorded before
		// showed the old text, and an edit may take quoted text out.
		w.answers.remove(removed{messages: mb.Deletes, edited: res.UpdatedIDs,
			channels: append(slices.Clone(mb.ForgetChannels), res.ForgotChannels...), guilds: mb.ForgetGuilds})
	}
	return res, err
}

func (w watched) OptOut(ctx context.Context, user api.ID) (*api.OptOut, error) {
	res, err := w.Searchd.OptOut(ctx, user)
	if err == nil {
		w.answers.remove(removed{authors: []api.ID{user}})
	}
	return res, err
}
