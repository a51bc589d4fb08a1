// Package redactlog rewrites log records on their way to a handler so
// that secrets or private text in them are withheld: searchd's logs keep
// message text out of errors (searchd/internal/privlog), the bot's keep
// Discord tokens out of everything (bot.RedactingHandler).
package redactlog

import (
	"context"
	"log/slog"
)

// Handler passes records to the wrapped handler with Redact applied to
// the text of every error attribute, and with Strings also to every string
// attribute and the message. With PassDebug, debug records pass untouched
// (the operator asked for them); attributes attached with WithAttrs are
// redacted whatever the level, since the handler cannot tell which
// records they will join.
type Handler struct {
	slog.Handler
	Redact    func(string) string
	Strings   bool
	PassDebug bool
}

func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	if h.PassDebug && r.Level <= slog.LevelDebug {
		return h.Handler.Handle(ctx, r)
	}
	msg := r.Message
	if h.Strings {
		msg = h.Redact(msg)
	}
	out := slog.NewRecord(r.Time, r.Level, msg, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h Handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = h.attr(a)
	}
	h.Handler = h.Handler.WithAttrs(out)
	return h
}

func (h Handler) WithGroup(name string) slog.Handler {
	h.Handler = h.Handler.WithGroup(name)
	return h
}

func (h Handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if h.Strings {
			return slog.String(a.Key, h.Redact(v.String()))
		}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.Redact(err.Error()))
		}
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, ga := range g {
			out[i] = h.attr(ga)
		}
		return slog.Group(a.Key, out...)
	}
	return a
}
