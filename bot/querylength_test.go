package bot

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Discord lets a member type as many characters into /query's question
// as the registered max_length allows, and searchd takes 1,000 bytes
// (docs/api.md): a question that long in Korean (three bytes a syllable),
// or of emoji (four), is answered, not refused with an error.
func TestLongestQuestionDiscordTakesIsAnswered(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	cmds := e.discord.Calls("PUT", "/applications/7000/guilds/1000/commands")
	if len(cmds) != 1 {
		t.Fatalf("%d command registrations, want 1", len(cmds))
	}
	var registered []struct {
		Name    string `json:"name"`
		Options []struct {
			Name      string `json:"name"`
			MaxLength int    `json:"max_length"`
		} `json:"options"`
	}
	if err := json.Unmarshal(cmds[0].Body, &registered); err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, c := range registered {
		for _, o := range c.Options {
			if c.Name == cmdQuery && o.Name == "question" {
				most = o.MaxLength
			}
		}
	}
	if most == 0 {
		t.Fatalf("/query's question has no max_length: Discord takes up to 6,000 characters")
	}
	for _, unit := range []string{"보", "🔥"} {
		_, edit, _ := e.interaction(bob, 2, query(strings.Repeat(unit, most)))
		if c, _ := edit["content"].(string); c != "" || embedText(edit) == "null" {
			t.Errorf("a question of %d %q, as long as Discord takes: %q", most, unit, c)
		}
	}
}

// A line the bot answers with may quote what the member typed (searchd's
// refusal of a date quotes it), and Discord takes at most 2,000
// characters of content: a longer one is refused, and the member who
// asked is never answered. A date option may be 6,000 characters long.
func TestRefusalOfALongDateFitsAMessage(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	for _, unit := range []string{"x", "보"} {
		_, edit, _ := e.interaction(bob, 2, query("boiler", map[string]any{"name": "since", "type": 3, "value": strings.Repeat(unit, 3000)}))
		c, _ := edit["content"].(string)
		if !strings.HasPrefix(c, "That did not work: since:") || utf8.RuneCountInString(c) > 2000 {
			t.Errorf("a refused date of 3,000 %q: %d characters: %.80q", unit, utf8.RuneCountInString(c), c)
		}
	}
}

// When Discord refuses the answer itself (a 400: something in it Discord
// will not show), the member who asked is told in one plain line instead
// of waiting on "thinking…" until the interaction expires.
func TestAnswerDiscordRefusesIsReplacedByALine(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	e.mu.Lock()
	token := fmt.Sprintf("token-%d", e.seq+1)
	e.mu.Unlock()
	original := "/webhooks/7000/" + token + "/messages/@original"
	e.discord.Fault("PATCH", original, http.StatusBadRequest, 1)
	e.interaction(bob, 2, query("what happened with the boiler?"))
	edits := e.discord.WaitCalls("PATCH", original, 2)
	var last map[string]any
	json.Unmarshal(edits[len(edits)-1].Body, &last)
	if c, _ := last["content"].(string); !strings.Contains(c, "could not be shown") || embedText(last) != "[]" {
		t.Errorf("after Discord refused the answer: %s", edits[len(edits)-1].Body)
	}
}

// A catch-up's description quotes the time asked from as the member typed
// it, and a since option takes 6,000 characters: a valid one that long
// (searchd reads a time in microseconds, leading zeros and all, and trims
// spaces) made a description over Discord's 4,096, and the member was
// told the answer could not be shown.
func TestCatchupSinceAsLongAsDiscordTakesIsShown(t *testing.T) {
	e := setup(t)
	e.backfilled(int64(len(history())))
	at := strconv.FormatInt(t0.UnixMicro(), 10)
	for name, since := range map[string]string{
		"zeros":  strings.Repeat("0", 6000-len(at)) + at,
		"spaces": t0.Format("2006-01-02") + strings.Repeat(" ", 5990),
	} {
		_, edit, _ := e.interaction(bob, 2, map[string]any{"id": "9001", "name": "catchup", "type": 1,
			"options": []map[string]any{{"name": "since", "type": 3, "value": since}}})
		var embeds []struct {
			Description string `json:"description"`
			Fields      []any  `json:"fields"`
		}
		b, _ := json.Marshal(edit["embeds"])
		json.Unmarshal(b, &embeds)
		if len(embeds) != 1 || len(embeds[0].Fields) == 0 {
			c, _ := edit["content"].(string)
			t.Errorf("a catch-up since %d characters (%s): %d embeds, %q", utf8.RuneCountInString(since), name, len(embeds), c)
		}
	}
}
