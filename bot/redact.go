package bot

import (
	"context"
	"log/slog"
	"regexp"
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
	if _, ok := h.(redacting); ok {
		return h
	}
	return redacting{h}
}

type redacting struct{ slog.Handler }

func (h redacting) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h redacting) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = redactAttr(a)
	}
	return redacting{h.Handler.WithAttrs(out)}
}

func (h redacting) WithGroup(name string) slog.Handler { return redacting{h.Handler.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Redact(v.String()))
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, Redact(err.Error()))
		}
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, ga := range g {
			out[i] = redactAttr(ga)
		}
		return slog.Group(a.Key, out...)
	}
	return a
}
