// Package privlog keeps message text out of searchd's logs. Log lines
// never name message text on purpose, but errors can carry it: database/sql
// quotes the value a scan chokes on, strconv the string it could not
// parse, SQLite the token near a syntax error — and on a damaged database
// that value is someone's message. Above debug level, the text of every
// error logged has its quoted parts withheld.
package privlog

import (
	"context"
	"log/slog"
	"regexp"
)

// New wraps h so that records above debug level carry errors redacted.
func New(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ slog.Handler }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level <= slog.LevelDebug {
		return h.Handler.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

// WithAttrs redacts at every level: the handler cannot tell which
// records the attributes will join.
func (h handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = redactAttr(a)
	}
	return handler{h.Handler.WithAttrs(out)}
}

func (h handler) WithGroup(name string) slog.Handler { return handler{h.Handler.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
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

// quoted matches a double-quoted part as Go's %q and SQLite write them,
// escapes included.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// Redact returns an error's text with every quoted part withheld.
func Redact(s string) string { return quoted.ReplaceAllString(s, `"…"`) }
