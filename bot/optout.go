package bot

import (
	"context"
	"strings"
	"time"

	dapi "github.com/diamondburned/arikawa/v3/api"
	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/gateway"

	"dsearch/shared/api"
)

// Opting out: a member asks to be left out of the index. /optout asks
// first (forgetting cannot be undone); its buttons carry the member's ID,
// so that only they can confirm. /optin is the way back for what they
// post from then on.
const (
	cmdOptOut     = "optout"
	cmdOptIn      = "optin"
	optOutPrefix  = "optout:"
	optOutConfirm = "yes"
	optOutCancel  = "no"
)

var optOutCommands = []dapi.CreateCommandData{
	{Name: cmdOptOut, Description: "Leave dsearch's index: forget your messages and stop indexing them (asks first)"},
	{Name: cmdOptIn, Description: "Let dsearch index what you post from now on, after /optout"},
}

// optOutPrompt asks the member to confirm, with what it will do.
func (b *Bot) optOutPrompt(ctx context.Context, e *gateway.InteractionCreateEvent) (*reply, error) {
	who, l := sender(e), langOf(e)
	st, err := b.searchd.OptOutStatus(ctx, api.ID(who))
	if err != nil {
		return nil, err
	}
	if st.OptedOut {
		return &reply{content: l.say("optedOutAlready")}, nil
	}
	button := func(style discord.ButtonComponentStyle, label, choice string) *discord.ButtonComponent {
		return &discord.ButtonComponent{Style: style, Label: label, CustomID: discord.ComponentID(optOutPrefix + choice + ":" + who.String())}
	}
	return &reply{
		content: l.say("optOutPrompt"),
		components: discord.ContainerComponents{&discord.ActionRowComponent{
			button(discord.DangerButtonStyle(), l.say("forgetButton"), optOutConfirm),
			button(discord.SecondaryButtonStyle(), l.say("cancelButton"), optOutCancel),
		}},
	}, nil
}

// optOutButton parses a confirmation button's custom ID: the choice and
// whose it is.
func optOutButton(id string) (choice string, member discord.UserID, ok bool) {
	rest, ok := strings.CutPrefix(id, optOutPrefix)
	if !ok {
		return "", 0, false
	}
	choice, who, _ := strings.Cut(rest, ":")
	s, err := discord.ParseSnowflake(who)
	if err != nil || (choice != optOutConfirm && choice != optOutCancel) {
		return "", 0, false
	}
	return choice, discord.UserID(s), true
}

// optOut carries out a confirmed opt-out, or a cancelled one.
func (b *Bot) optOut(ctx context.Context, member discord.UserID, choice string, l lang) (*reply, error) {
	if choice == optOutCancel {
		return &reply{content: l.say("optOutCancelled")}, nil
	}
	// Batches searchd refused keep their text until a replay, and those
	// waiting in the spool until searchd takes them (both of which
	// searchd would filter): the member's messages leave them now, and
	// the public answers quoting them are withdrawn (Bot.took).
	res, err := b.searchd.OptOut(ctx, api.ID(member))
	if err != nil {
		return nil, err
	}
	return &reply{content: l.say("optOutDone", res.Forgotten)}, nil
}

// optIn is the way back, for new messages.
func (b *Bot) optIn(ctx context.Context, e *gateway.InteractionCreateEvent) (*reply, error) {
	l := langOf(e)
	st, err := b.searchd.OptOutStatus(ctx, api.ID(sender(e)))
	if err != nil {
		return nil, err
	}
	if !st.OptedOut {
		return &reply{content: l.say("notOptedOut")}, nil
	}
	if _, err := b.searchd.OptIn(ctx, api.ID(sender(e))); err != nil {
		return nil, err
	}
	return &reply{content: l.say("optedIn")}, nil
}

// leaveOutOwnMessages opts the bot itself out of the index, once: its
// answers echo other members' messages (an LLM's summary of them), which
// must not outlive their deletion or opt-out. It skips them live and in
// pages; this forgets those stored before it did, and keeps out those an
// export brings.
func (b *Bot) leaveOutOwnMessages(ctx context.Context) {
	for wait := time.Second; ; wait = min(2*wait, maxRetryWait) {
		if me, err := b.state.Me(); err == nil {
			st, err := b.searchd.OptOutStatus(ctx, api.ID(me.ID))
			if err == nil && !st.OptedOut {
				st, err = b.searchd.OptOut(ctx, api.ID(me.ID))
				if err == nil && st.Forgotten > 0 {
					b.log.Info("forgot the bot's own answers stored before", "messages", st.Forgotten)
				}
			}
			if err == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
