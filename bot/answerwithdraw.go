package bot

import (
	"context"
	"errors"
	"slices"

	dapi "github.com/diamondburned/arikawa/v3/api"
	"github.com/diamondburned/arikawa/v3/discord"
	"github.com/diamondburned/arikawa/v3/utils/httputil"
	"github.com/diamondburned/arikawa/v3/utils/json/option"
)

// Withdrawing on Discord the answers marked Pending (answers.go).

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
					s.log.Info("public answer withdrawn", "reply", a.Reply, "channel", a.Channel, "expired", a.Expired)
					cur.Pending, cur.Withdrawn, cur.Failed = false, true, false
					cur.Messages, cur.Authors, cur.Channels = nil, nil, nil
				}
				s.saveLogged()
			}
			s.mu.Unlock()
		}
	}
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
	line := l.say("withdrawn")
	if a.Expired {
		line = l.say("agedOut")
	}
	ch, id := discord.ChannelID(a.Channel), discord.MessageID(a.Reply)
	_, err := b.state.EditMessageComplex(ch, id, dapi.EditMessageData{
		Content: option.NewNullableString(line), Embeds: &[]discord.Embed{},
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

// gone: Discord says the message or its channel is no more (Unknown
// Message, 10008; Unknown Channel, unknownChannel). A bare 404 (a
// proxy's, a route's) proves nothing: taken for gone, the answer would
// be recorded withdrawn and go on showing what it quoted.
func gone(err error) bool {
	var he *httputil.HTTPError
	return errors.As(err, &he) && he.Status == 404 && he.Code == 10008 || unknownChannel(err)
}
