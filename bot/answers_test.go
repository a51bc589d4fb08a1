package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	if r, ok := e.discord.ReplyTo(token); !ok || !strings.Contains(r.Embeds, want) {
		e.t.Fatalf("Discord keeps no reply showing %q: %+v", want, r)
	}
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
