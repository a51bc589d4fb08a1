package bot

import (
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/diamondburned/arikawa/v3/discord"

	"dsearch/shared/api"
)

// A public answer stays in its channel for good, quoting members'
// messages (previews, and the LLM's summary of them). What is deleted is
// gone (docs/design.md), so the bot records what each public answer it
// posted quotes, by ID alone (SPOOL/answers, answerfile.go), and
// withdraws the answer, editing it into one line (answerwithdraw.go),
// once one of those messages is deleted or edited, its channel or thread
// deleted, or its author opts out. Two ways tell it: a removal the bot
// itself hands searchd, at once (Bot.took); and, for what anything else
// removed (dsearch-bot --reconcile, searchd forget, an opt-out through
// searchd's API), asking searchd what of it is gone (answercheck.go).

const (
	answersFile = "answers"
	// maxAnswers bounds SPOOL/answers (about 1.5 kB an answer, at most
	// 35 messages): past it the oldest answers are withdrawn, not
	// forgotten, since one out of the record could never be withdrawn.
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
	// Versions are the edit times of the messages the answer showed, as
	// it showed them (zero: not edited); a later edit, whoever handed
	// searchd it, withdraws the answer (answercheck.go). A message not
	// here (a jump link's alone, or an answer recorded before) counts as
	// quoted at At.
	Versions map[api.ID]time.Time `json:"versions,omitempty"`
	// Withdrawn: edited into the withdrawal line (or gone); kept so that
	// a More press landing after it is undone again.
	Withdrawn bool `json:"withdrawn,omitempty"`
	// Pending: to withdraw. Failed: Discord refused it; tried again at
	// the next start, not at every later withdrawal. Expired: withdrawn
	// for its age (maxAnswers), not for a removal.
	Pending bool `json:"pending,omitempty"`
	Failed  bool `json:"failed,omitempty"`
	Expired bool `json:"expired,omitempty"`
}

// quotes is what a public reply shows, before it is posted.
type quotes struct {
	korean                     bool
	messages, authors, channel []api.ID
	versions                   map[api.ID]time.Time // answer.Versions
	asked                      time.Time            // when searchd was asked for the page
}

type answers struct {
	path string
	log  *slog.Logger
	edit func(a *answer) error // withdraws a reply on Discord

	max int // maxAnswers; lower in tests

	mu     sync.Mutex
	list   []*answer // oldest first
	recent recentRemovals
	work   chan struct{}
	// check asks for searchd to be asked what the answers quote that it
	// no longer holds (answercheck.go).
	check chan struct{}
}

// recentRemovals are the removals of the last recentFor, each ID with
// when it was removed.
type recentRemovals struct {
	messages, channels, guilds, authors, changed map[api.ID]time.Time
}

// kinds pairs each of rr's maps with r's set of the same kind.
func (rr *recentRemovals) kinds(r *removal) []struct {
	m   *map[api.ID]time.Time
	ids *idSet
} {
	return []struct {
		m   *map[api.ID]time.Time
		ids *idSet
	}{{&rr.messages, &r.messages}, {&rr.channels, &r.channels}, {&rr.guilds, &r.guilds}, {&rr.authors, &r.authors}, {&rr.changed, &r.changed}}
}

func (rr *recentRemovals) add(r *removal, now time.Time) {
	for _, k := range rr.kinds(r) {
		if *k.m == nil {
			*k.m = map[api.ID]time.Time{}
		}
		for id := range *k.ids {
			(*k.m)[id] = now
		}
	}
}

// since drops what is older than recentFor and returns the rest; a text
// change only if taken after asked (an answer asked for later shows the
// new text).
func (rr *recentRemovals) since(asked time.Time) *removal {
	r := &removal{}
	for _, k := range rr.kinds(r) {
		*k.ids = idSet{}
		after := time.Time{}
		if k.m == &rr.changed {
			after = asked
		}
		for id, at := range *k.m {
			if time.Since(at) > recentFor {
				delete(*k.m, id)
			} else if at.After(after) {
				(*k.ids)[id] = true
			}
		}
	}
	return r
}

// quotes reports whether a quotes what r removed.
func (a *answer) quotes(r *removal) bool {
	return r.messages.any(a.Messages) || r.changed.any(a.Messages) || r.channels.any(a.Channels) || r.channels[a.Channel] ||
		r.guilds[a.Guild] || r.authors.any(a.Authors)
}

// record notes a public reply posted (or edited to another page): what it
// quotes now. A reply already withdrawn, or quoting what was removed
// while it was being written, is withdrawn (again) at once.
func (s *answers) record(reply, channel, guild api.ID, q *quotes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &answer{Reply: reply, Channel: channel, Guild: guild, At: time.Now().UTC(), Korean: q.korean,
		Messages: q.messages, Authors: q.authors, Channels: q.channel, Versions: q.versions}
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
	s.expire()
	s.saveLogged()
}

// expire marks for withdrawal the oldest answers past the newest s.max
// still shown, and drops the oldest withdrawn ones while the record holds
// more than s.max. s.mu is held.
func (s *answers) expire() {
	shown := 0
	for i := len(s.list) - 1; i >= 0; i-- {
		a := s.list[i]
		if a.Withdrawn {
			continue
		}
		if shown++; shown > s.max && !a.Pending {
			a.Pending, a.Expired = true, true
			s.wake()
		}
	}
	for i := 0; len(s.list) > s.max && i < len(s.list); {
		if s.list[i].Withdrawn {
			s.list = slices.Delete(s.list, i, i+1)
		} else {
			i++
		}
	}
}

// remove marks for withdrawal every answer quoting what r removed.
func (s *answers) remove(r *removal) {
	if r.empty() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent.add(r, time.Now())
	// The answers in a server the bot left cannot be reached (Discord
	// refuses the bot there): their record goes.
	left := len(s.list)
	s.list = slices.DeleteFunc(s.list, func(a *answer) bool { return r.guilds[a.Guild] })
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

// withdrawIf marks for withdrawal every answer in guild g, not withdrawn
// yet, that stale says may no longer show what it quotes.
func (s *answers) withdrawIf(g api.ID, stale func(*answer) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.list {
		if a.Guild == g && !a.Withdrawn && !a.Pending && stale(a) {
			a.Pending = true
			n++
		}
	}
	if n > 0 {
		s.log.Info("public answers quote channels no longer shown where they were posted; withdrawing them", "guild", g, "answers", n)
		s.saveLogged()
		s.wake()
	}
}

// retryRefused tries again the withdrawals of guild g's answers Discord
// refused (kept for the next start otherwise): the bot may view channels
// again, and Discord refuses a channel's messages to a bot that may not
// view it, its own answers too.
func (s *answers) retryRefused(g api.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.list {
		if a.Guild == g && a.Pending && a.Failed {
			a.Failed = false
			n++
		}
	}
	if n > 0 {
		s.wake()
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

// quotesOf is what a page of a public answer quotes: each result's
// messages shown (the LLM summarizes those) and its jump link's.
func (b *Bot) quotesOf(resp *api.QueryResponse, l lang) *quotes {
	q := &quotes{korean: l == ko, versions: map[api.ID]time.Time{}}
	add := func(list *[]api.ID, id api.ID) {
		if id != 0 && !slices.Contains(*list, id) {
			*list = append(*list, id)
		}
	}
	// An archived thread is not in the state: searchd names its parent.
	addChannel := func(id api.ID, r *api.SearchResult) {
		add(&q.channel, id)
		if c, err := b.state.Cabinet.Channel(discord.ChannelID(id)); err == nil && isThread(c.Type) {
			add(&q.channel, api.ID(c.ParentID))
		} else if id == r.ChannelID {
			add(&q.channel, r.ParentID)
		}
	}
	for i := range resp.Results {
		r := &resp.Results[i]
		add(&q.messages, r.MessageID)
		addChannel(r.ChannelID, r)
		for _, a := range r.AuthorIDs { // named in its header
			add(&q.authors, a)
		}
		for _, m := range r.Previews {
			add(&q.messages, m.ID)
			if _, ok := q.versions[m.ID]; !ok {
				q.versions[m.ID] = time.Time{}
				if m.EditedAt != nil {
					q.versions[m.ID] = *m.EditedAt
				}
			}
			add(&q.authors, m.AuthorID)
			addChannel(m.ChannelID, r)
		}
	}
	return q
}
