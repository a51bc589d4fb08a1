package bot

import (
	"log/slog"
	"regexp"

	"dsearch/shared/redactlog"
)

// Discord's errors can carry secrets: arikawa's failed requests quote
// their URL, and an interaction's follow-up and edit URLs hold its token
// in the path (/webhooks/APP/TOKEN/…, /interactions/ID/TOKEN/callback):
// whoever reads it can answer as the bot for 15 minutes. Bot tokens have
// a shape of their own (base64 user ID, timestamp, HMAC).
var (
	interactionToken = regexp.MustCompile(`(/(?:webhooks|interactions)/\d+/)[^/?#\s"']+`)
	botToken         = regexp.MustCompile(`[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{20,}`)
	authorization    = regexp.MustCompile(`(?i)(\bBot\s+)[A-Za-z0-9._-]{20,}`)
)

// Redact withholds interaction and bot tokens from an error's text. Every
// error the bot logs, writes to its status file or shows passes here.
func Redact(s string) string {
	s = interactionToken.ReplaceAllString(s, "${1}…")
	s = authorization.ReplaceAllString(s, "${1}…")
	return botToken.ReplaceAllString(s, "…")
}

// RedactingHandler wraps h so that the errors and strings of every record
// are redacted.
func RedactingHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(redactlog.Handler); ok {
		return h
	}
	return redactlog.Handler{Handler: h, Redact: Redact, Strings: true}
}
