package bot

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	dapi "github.com/diamondburned/arikawa/v3/api"
	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/gateway"
	"github.com/diamondburned/arikawa/v3/utils/json/option"

	"dsearch/shared/api"
	"dsearch/shared/safesock"
)

// Command names.
const (
	cmdQuery   = "query"
	cmdCatchup = "catchup"
	cmdRelated = "Find related conversations"
	morePrefix = "more:"
)

// maxQuestion is the longest question Discord lets a member type, in
// characters: searchd takes 1,000 bytes, and a character is up to four
// (three for Hangul), so any question Discord takes is answered.
const maxQuestion = 250

var commands = []dapi.CreateCommandData{
	{
		Name: cmdQuery, Description: "Search this server's history and answer a question",
		Options: discord.CommandOptions{
			&discord.StringOption{OptionName: "question", Description: "What you want to find", Required: true, MaxLength: option.NewInt(maxQuestion)},
			&discord.UserOption{OptionName: "author", Description: "Only messages by this person"},
			&discord.ChannelOption{OptionName: "channel", Description: "Only this channel"},
			&discord.StringOption{OptionName: "since", Description: "From this date (2024-05-01)"},
			&discord.StringOption{OptionName: "until", Description: "Up to this date (2024-12-31)"},
			&discord.BooleanOption{OptionName: "public", Description: "Show the answer to everyone in the channel"},
		},
	},
	{
		Name: cmdCatchup, Description: "Summarize a channel's conversations since a time",
		Options: discord.CommandOptions{
			&discord.ChannelOption{OptionName: "channel", Description: "The channel (default: this one)"},
			&discord.StringOption{OptionName: "since", Description: "From this date or time (default: a day ago)"},
			&discord.StringOption{OptionName: "until", Description: "Up to this date or time (default: now)"},
		},
	},
	{Name: cmdRelated, Type: discord.MessageCommand},
	optOutCommands[0], optOutCommands[1],
}

// registerCommands puts the commands on a guild (guild commands appear at
// once; global ones can take an hour).
func (b *Bot) registerCommands(g discord.GuildID) {
	b.mu.Lock()
	done := b.commands[g]
	b.commands[g] = true
	b.mu.Unlock()
	if done {
		return
	}
	app, err := b.appID()
	if err == nil {
		_, err = b.state.BulkOverwriteGuildCommands(app, g, localized(commands))
	}
	if err != nil {
		b.mu.Lock()
		delete(b.commands, g)
		b.mu.Unlock()
		b.log.Error("cannot register commands", "guild", g, "err", err)
	}
}

func (b *Bot) appID() (discord.AppID, error) {
	r := b.state.Ready()
	if r.Application.ID.IsValid() {
		return r.Application.ID, nil
	}
	app, err := b.state.CurrentApplication()
	if err != nil {
		return 0, err
	}
	return app.ID, nil
}

// reply is what an interaction's deferred answer becomes.
type reply struct {
	content    string
	embeds     []discord.Embed
	components discord.ContainerComponents
	// quotes: a public answer's page, what it quotes (answers.go).
	quotes *quotes
}

// interact answers one interaction: defer at once (Discord allows three
// seconds), work, then edit the deferred reply. Every failure becomes one
// plain line for the user; details go to the log.
func (b *Bot) interact(e *gateway.InteractionCreateEvent) {
	ctx, cancel := context.WithTimeout(context.Background(), 14*time.Minute) // tokens live 15
	defer cancel()
	l := langOf(e)
	switch {
	case !e.GuildID.IsValid() || e.Member == nil:
		b.respondLine(e, l.say("dm"))
		return
	case !b.allowed(e.GuildID):
		b.respondLine(e, l.say("notAllowed"))
		return
	}
	var run func(context.Context) (*reply, error)
	ephemeral := true
	update := false
	switch d := e.Data.(type) {
	case *discord.CommandInteraction:
		switch d.Name {
		case cmdQuery:
			if pub, err := d.Options.Find("public").BoolValue(); err == nil && pub {
				ephemeral = false
			}
			run = func(ctx context.Context) (*reply, error) { return b.query(ctx, e, d, !ephemeral, l) }
		case cmdCatchup:
			run = func(ctx context.Context) (*reply, error) { return b.catchup(ctx, e, d, l) }
		case cmdRelated:
			run = func(ctx context.Context) (*reply, error) { return b.related(ctx, e, d, l) }
		case cmdOptOut:
			run = func(ctx context.Context) (*reply, error) { return b.optOutPrompt(ctx, e) }
		case cmdOptIn:
			run = func(ctx context.Context) (*reply, error) { return b.optIn(ctx, e) }
		}
	case *discord.ButtonInteraction:
		if key, ok := strings.CutPrefix(string(d.CustomID), morePrefix); ok {
			pg := b.pages.get(key)
			switch {
			case pg == nil:
				b.respondLine(e, l.say("expired"))
				return
			case pg.asker != sender(e):
				// Results follow the asker's permissions: not for others.
				b.respondLine(e, l.say("notAsker"))
				return
			case pg.public && e.Message != nil && b.answers.withdrawn(api.ID(e.Message.ID)):
				b.respondLine(e, l.say("withdrawnMore"))
				return
			}
			update = true
			run = func(ctx context.Context) (*reply, error) { return b.more(ctx, e, pg, l) }
		} else if choice, member, ok := optOutButton(string(d.CustomID)); ok {
			if member != sender(e) {
				b.respondLine(e, l.say("notMember"))
				return
			}
			update = true
			run = func(ctx context.Context) (*reply, error) { return b.optOut(ctx, member, choice, l) }
		}
	}
	if run == nil {
		b.respondLine(e, l.say("unknown"))
		return
	}
	deferred := dapi.InteractionResponse{Type: dapi.DeferredMessageInteractionWithSource, Data: &dapi.InteractionResponseData{}}
	if update {
		deferred = dapi.InteractionResponse{Type: dapi.DeferredMessageUpdate}
	} else if ephemeral {
		deferred.Data.Flags = discord.EphemeralMessage
	}
	if err := b.state.RespondInteraction(e.ID, e.Token, deferred); err != nil {
		b.log.Error("cannot defer an interaction", "err", err)
		return
	}
	r, err := run(ctx)
	if err != nil && update {
		// Keep the page on screen; say what went wrong beside it.
		b.log.Info("interaction failed", "command", commandName(e), "err", loggable(err))
		_, err = b.state.FollowUpInteraction(e.AppID, e.Token, dapi.InteractionResponseData{
			Content: option.NewNullableString(plainError(l, err)), Flags: discord.EphemeralMessage, AllowedMentions: noPings()})
		if err != nil {
			b.log.Error("cannot send an answer", "command", commandName(e), "err", err)
		}
		return
	}
	edit := dapi.EditInteractionResponseData{AllowedMentions: noPings()}
	if err != nil {
		b.log.Info("interaction failed", "command", commandName(e), "err", loggable(err))
		edit.Content = option.NewNullableString(plainError(l, err))
		edit.Embeds = &[]discord.Embed{}
		edit.Components = &discord.ContainerComponents{}
	} else {
		// Empty, not null: a reply of words alone clears a page's embeds and buttons.
		embeds, components := append([]discord.Embed{}, r.embeds...), append(discord.ContainerComponents{}, r.components...)
		edit.Content = option.NewNullableString(r.content)
		edit.Embeds, edit.Components = &embeds, &components
	}
	msg, err := b.state.EditInteractionResponse(e.AppID, e.Token, edit)
	if err != nil {
		b.log.Error("cannot send an answer", "command", commandName(e), "err", err)
		b.notShown(e, l, update)
		return
	}
	if r != nil && r.quotes != nil {
		ch := msg.ChannelID
		if !ch.IsValid() {
			ch = e.ChannelID
		}
		b.answers.record(api.ID(msg.ID), api.ID(ch), api.ID(e.GuildID), r.quotes)
		// A channel may have narrowed while the page was written (searchd
		// and the LLM take seconds), its access check run before this
		// record.
		b.recheckAnswers(e.GuildID)
	}
}

// notShown tells the member in one plain line that their reply could not
// be sent (Discord, or arikawa's check of Discord's limits, refused it),
// rather than leaving them on "thinking…" until the interaction expires.
// A page pressed on stays, the line beside it.
func (b *Bot) notShown(e *gateway.InteractionCreateEvent, l lang, update bool) {
	line := option.NewNullableString(l.say("notShown"))
	var err error
	if update {
		_, err = b.state.FollowUpInteraction(e.AppID, e.Token, dapi.InteractionResponseData{
			Content: line, Flags: discord.EphemeralMessage, AllowedMentions: noPings()})
	} else {
		_, err = b.state.EditInteractionResponse(e.AppID, e.Token, dapi.EditInteractionResponseData{
			Content: line, Embeds: &[]discord.Embed{}, Components: &discord.ContainerComponents{}, AllowedMentions: noPings()})
	}
	if err != nil {
		b.log.Error("cannot say the answer was not sent", "command", commandName(e), "err", err)
	}
}

// noPings: the bot's replies mention nobody. A public answer's or error's
// line may quote what the asker typed (or a result's text), and an
// @everyone in it would otherwise ping the whole server.
func noPings() *dapi.AllowedMentions {
	return &dapi.AllowedMentions{Parse: []dapi.AllowedMentionType{}}
}

// respondLine answers at once with one private line.
func (b *Bot) respondLine(e *gateway.InteractionCreateEvent, line string) {
	err := b.state.RespondInteraction(e.ID, e.Token, dapi.InteractionResponse{Type: dapi.MessageInteractionWithSource,
		Data: &dapi.InteractionResponseData{Content: option.NewNullableString(line), Flags: discord.EphemeralMessage, AllowedMentions: noPings()}})
	if err != nil {
		b.log.Error("cannot answer an interaction", "err", err)
	}
}

func commandName(e *gateway.InteractionCreateEvent) string {
	if d, ok := e.Data.(*discord.CommandInteraction); ok {
		return d.Name
	}
	return "button"
}

func sender(e *gateway.InteractionCreateEvent) discord.UserID {
	if u := e.Sender(); u != nil {
		return u.ID
	}
	return 0
}

// plainError turns an error into one line a user can act on, in their
// language, within a message's length: searchd's refusal may quote what
// the member typed (a date option takes 6,000 characters), and Discord
// refuses a longer message, leaving the member unanswered.
func plainError(l lang, err error) string {
	return clip(errorLine(l, err), maxContent)
}

func errorLine(l lang, err error) string {
	var ae *api.Error
	var ue *userError
	switch {
	case errors.As(err, &ae) && ae.Status == 503:
		return l.say("notReady", ae.Message)
	case errors.As(err, &ae) && ae.Status/100 == 4:
		return l.say("didNotWork", ae.Message)
	case errors.As(err, &ae):
		return l.say("failedInside")
	case strings.Contains(err.Error(), "searchd is not reachable"):
		return l.say("down")
	case errors.As(err, new(*safesock.UnsafeError)):
		// The socket's path, modes and owners are the operator's: the
		// log has them.
		return l.say("unsafeSocket")
	case errors.Is(err, context.DeadlineExceeded):
		return l.say("tooLong")
	case errors.As(err, &ue):
		return l.say("sorry", l.say(ue.id, ue.args...))
	}
	line, _, _ := strings.Cut(Redact(err.Error()), "\n")
	return l.say("sorry", line)
}

func (b *Bot) query(ctx context.Context, e *gateway.InteractionCreateEvent, d *discord.CommandInteraction, public bool, l lang) (*reply, error) {
	var picked discord.ChannelID
	if s, err := d.Options.Find("channel").SnowflakeValue(); err == nil {
		picked = discord.ChannelID(s)
	}
	pg := &page{asker: sender(e), picked: picked, public: public, here: e.ChannelID}
	channels, readable, err := b.answerChannels(e.GuildID, e.Member, pg)
	if err != nil {
		return nil, err
	}
	req := api.QueryRequest{Question: d.Options.Find("question").String(), Channels: channels, Readable: readable,
		Since: d.Options.Find("since").String(), Until: d.Options.Find("until").String(), Limit: b.cfg.PageSize}
	if s, err := d.Options.Find("author").SnowflakeValue(); err == nil && s.IsValid() {
		req.Authors = []api.ID{api.ID(s)}
	}
	asked := time.Now()
	resp, err := b.searchd.Query(ctx, &req)
	if err != nil {
		return nil, err
	}
	pg.request = req
	return b.answerReply(pg, resp, l, asked), nil
}

// errAccessChanged stops paging when the asker's channels are not what
// the first page searched: rights are checked on every page.
var errAccessChanged error = &userError{id: "accessChanged"}

// more shows an answer's next page, to the same audience, after checking
// the asker's channels again with the button press's member data.
func (b *Bot) more(ctx context.Context, e *gateway.InteractionCreateEvent, pg *page, l lang) (*reply, error) {
	channels, readable, err := b.answerChannels(e.GuildID, e.Member, pg)
	if err != nil {
		return nil, err
	}
	if !sameIDs(channels, pg.request.Channels) || !sameIDs(readable, pg.request.Readable) {
		return nil, errAccessChanged
	}
	asked := time.Now()
	resp, err := b.searchd.Query(ctx, &pg.request)
	if err != nil {
		return nil, err
	}
	return b.answerReply(pg, resp, l, asked), nil
}

// answerChannels is the channel filter of an answer: the asker's, or for
// a public one, what every reader of its channel may read. When a channel
// is picked, readable is the filter without it: what the audience may
// read, which searchd tells how common a word is from (api.QueryRequest).
func (b *Bot) answerChannels(guildID discord.GuildID, member *discord.Member, pg *page) (channels, readable []api.ID, err error) {
	filter := func(picked discord.ChannelID) ([]api.ID, error) {
		if pg.public {
			return b.publicFilter(guildID, member, pg.here, picked)
		}
		return b.channelFilter(guildID, member, pg.here, picked)
	}
	if channels, err = filter(pg.picked); err != nil || !pg.picked.IsValid() {
		return channels, nil, err
	}
	if readable, err = filter(0); err != nil {
		// More than searchd takes in a list: told from the picked
		// channel alone, which the audience may read.
		return channels, nil, nil
	}
	return channels, readable, nil
}

func sameIDs(a, b []api.ID) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// answerReply renders an answer searchd was asked for at asked and,
// when there is more, a button whose page state holds the next cursor.
func (b *Bot) answerReply(pg *page, resp *api.QueryResponse, l lang, asked time.Time) *reply {
	r := &reply{embeds: []discord.Embed{answerEmbed(l, &pg.request, resp, pg.public, b.syncing.count(pg.request.Channels))}}
	if pg.public {
		r.quotes = b.quotesOf(resp, l)
		r.quotes.asked = asked
	}
	if resp.NextCursor != "" {
		next := *pg
		next.request.Cursor = resp.NextCursor
		key := b.pages.put(&next)
		r.components = discord.ContainerComponents{&discord.ActionRowComponent{
			&discord.ButtonComponent{Style: discord.SecondaryButtonStyle(), Label: l.say("more"), CustomID: discord.ComponentID(morePrefix + key)},
		}}
	}
	return r
}

// catchupShown is the most conversations a catch-up shows.
const catchupShown = 10

func (b *Bot) catchup(ctx context.Context, e *gateway.InteractionCreateEvent, d *discord.CommandInteraction, l lang) (*reply, error) {
	ch := e.ChannelID
	if s, err := d.Options.Find("channel").SnowflakeValue(); err == nil && s.IsValid() {
		ch = discord.ChannelID(s)
	}
	if _, err := b.channelFilter(e.GuildID, e.Member, e.ChannelID, ch); err != nil {
		return nil, err
	}
	since := d.Options.Find("since").String()
	shown := since // as the member wrote it
	if since == "" {
		since, shown = time.Now().Add(-24*time.Hour).UTC().Format(time.RFC3339), l.say("aDayAgo")
	}
	until := d.Options.Find("until").String()
	// One more than is shown tells whether older conversations since
	// then are left out, which the reply says.
	resp, err := b.searchd.Catchup(ctx, &api.CatchupRequest{Channel: api.ID(ch), Since: since, Until: until, Limit: catchupShown + 1})
	if err != nil {
		return nil, err
	}
	more := len(resp.Conversations) > catchupShown
	if more {
		resp.Conversations = resp.Conversations[:catchupShown]
	}
	return &reply{embeds: []discord.Embed{catchupEmbed(l, ch, shown, until, resp, more, b.syncing.count([]api.ID{api.ID(ch)}))}}, nil
}

// related searches with a message's text, leaving out the conversation
// the message belongs to.
func (b *Bot) related(ctx context.Context, e *gateway.InteractionCreateEvent, d *discord.CommandInteraction, l lang) (*reply, error) {
	msg, ok := d.Resolved.Messages[d.TargetMessageID()]
	text := said(&msg) // a forward's text too
	if !ok || strings.TrimSpace(text) == "" {
		return nil, &userError{id: "noText"}
	}
	channels, err := b.channelFilter(e.GuildID, e.Member, e.ChannelID, 0)
	if err != nil {
		return nil, err
	}
	q := url.Values{"q": {truncate(text, 1000)}, "limit": {"6"}}
	for _, c := range channels {
		q.Add("channel", c.String())
	}
	resp, err := b.searchd.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	own := int64(-1)
	if mc, err := b.searchd.Message(ctx, api.ID(msg.ID), 0, 0); err == nil {
		own = mc.Message.SegmentID
	}
	var results []api.SearchResult
	for _, r := range resp.Results {
		if r.SegmentID != own && r.MessageID != api.ID(msg.ID) && len(results) < b.cfg.PageSize {
			results = append(results, r)
		}
	}
	return &reply{embeds: []discord.Embed{relatedEmbed(l, results)}}, nil
}

// truncate cuts s to at most n bytes on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// loggable is err as an interaction's failure is logged: searchd's
// refusals quote what the member typed (a date, an ID: "since: \"…\" is
// not a time I can read"), which is theirs to see in the reply and not the
// log's, so a refusal is logged by its status and code alone.
func loggable(err error) any {
	var ae *api.Error
	if errors.As(err, &ae) {
		return fmt.Sprintf("searchd refused the request: HTTP %d %s", ae.Status, ae.Code)
	}
	return err
}
