package bot

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"dsearch/shared/api"
)

// botTokenLike has the shape of a real bot token (made up).
const botTokenLike = "MTA5ODc2NTQzMjEwOTg3NjU0Mw.GaBcDe.x1Y2z3W4v5U6t7S8r9Q0pOnMlKjIhGfEdCbA"

func TestRedactWithholdsDiscordSecrets(t *testing.T) {
	for _, tc := range []struct{ in, secret, keep string }{
		{`request failed: Patch "https://discord.com/api/v10/webhooks/7000/aW50ZXJhY3Rpb246MTIz/messages/@original": EOF`,
			"aW50ZXJhY3Rpb246MTIz", "/webhooks/7000/…/messages/@original"},
		{`Post "https://discord.com/api/v10/interactions/8001/tok_en-9/callback": dial tcp: i/o timeout`,
			"tok_en-9", "/interactions/8001/…/callback"},
		{`Post "https://discord.com/api/v10/webhooks/7000/abc?wait=true": EOF`, "abc?", "/webhooks/7000/…?wait=true"},
		{"identify with " + botTokenLike + " refused", botTokenLike, "identify with … refused"},
		{"Authorization: Bot some.odd_token-shape-0123456789", "some.odd_token", "Authorization: Bot …"},
	} {
		got := Redact(tc.in)
		if strings.Contains(got, tc.secret) || !strings.Contains(got, tc.keep) {
			t.Errorf("Redact(%q) = %q; want %q kept and %q gone", tc.in, got, tc.keep, tc.secret)
		}
	}
	plain := `GET "https://discord.com/api/v10/channels/2000/messages?limit=100": 403 Missing Access`
	if got := Redact(plain); got != plain {
		t.Errorf("Redact changed an error without secrets: %q", got)
	}
}

func TestRedactingHandlerRedactsErrorsStringsAndGroups(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(RedactingHandler(slog.NewJSONHandler(&buf, nil)))
	secret := errors.New(`Patch "https://discord.com/api/v10/webhooks/7000/SECRET1/messages/@original": EOF`)
	log.With("why", "Bot "+botTokenLike).WithGroup("g").Error("failed", "err", secret,
		"nested", slog.GroupValue(slog.String("url", "/interactions/1/SECRET2/callback")))
	if out := buf.String(); strings.Contains(out, "SECRET") || strings.Contains(out, botTokenLike) || !strings.Contains(out, "/webhooks/7000/…") {
		t.Errorf("log holds a secret: %s", out)
	}
}

// failToken makes every Discord request for the interaction whose token is
// token (and method, unless empty) fail as a broken connection does:
// Go's HTTP client then quotes the URL, token included, in its error.
type failToken struct {
	next          http.RoundTripper
	token, method string
}

func (f failToken) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.Contains(r.URL.Path, "/"+f.token+"/") && (f.method == "" || r.Method == f.method) {
		return nil, errors.New("connection reset by peer")
	}
	return f.next.RoundTrip(r)
}

// Interaction tokens in the URLs of failed requests never reach the bot's
// log: one interaction whose deferral fails, one whose answer fails.
func TestInteractionTokensNeverLogged(t *testing.T) {
	const deferTok, answerTok = "deferSecretToken123", "answerSecretToken456"
	e := setup(t, func(c *Config) {
		c.Transport = failToken{next: failToken{next: c.Transport, token: deferTok}, token: answerTok, method: http.MethodPatch}
	})
	e.backfilled(int64(len(history())))
	m, _ := e.discord.Member(alice)
	for i, tok := range []string{deferTok, answerTok} {
		e.discord.Dispatch("INTERACTION_CREATE", map[string]any{"id": fmt.Sprint(8900 + i), "application_id": fmt.Sprint(appID),
			"type": 2, "data": query("release"), "guild_id": fmt.Sprint(guildID), "channel_id": fmt.Sprint(general), "member": m,
			"token": tok, "version": 1, "locale": "en-US"})
	}
	waitFor(t, "both failures logged", func() bool {
		log := e.log.String()
		return strings.Contains(log, "cannot defer an interaction") && strings.Contains(log, "cannot send an answer")
	})
	log := e.log.String()
	for _, tok := range []string{deferTok, answerTok} {
		if strings.Contains(log, tok) {
			t.Errorf("the bot's log holds interaction token %s:\n%s", tok, log)
		}
	}
	if !strings.Contains(log, "/webhooks/7000/…") || !strings.Contains(log, "/interactions/8900/…/callback") {
		t.Errorf("the failed requests are not named in the log:\n%s", log)
	}
}

// searchd's refusals quote what a member typed (a date they wrote, an
// ID); a failed interaction is logged at info without it.
func TestLoggedRefusalsWithholdWhatWasTyped(t *testing.T) {
	refusal := fmt.Errorf("query: %w", &api.Error{Status: 400, Message: `since: "my card is 4111 1111" is not a time I can read`})
	if got := fmt.Sprint(loggable(refusal)); strings.Contains(got, "4111") || !strings.Contains(got, "400") {
		t.Errorf("logged as %q", got)
	}
	other := errors.New("connection reset by peer")
	if loggable(other) != other {
		t.Error("an error that is no refusal is logged as it is")
	}
}
