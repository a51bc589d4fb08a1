// Package privlog keeps message text out of searchd's logs. Log lines
// never name message text on purpose, but errors can carry it: database/sql
// quotes the value a scan chokes on, strconv the string it could not
// parse, SQLite the token near a syntax error — and on a damaged database
// that value is someone's message. Above debug level, the text of every
// error logged has its quoted parts withheld.
package privlog

import (
	"log/slog"
	"regexp"

	"dsearch/shared/redactlog"
)

// New wraps h so that records above debug level carry errors redacted.
func New(h slog.Handler) slog.Handler {
	return redactlog.Handler{Handler: h, Redact: Redact, PassDebug: true}
}

// quoted matches a double-quoted part as Go's %q and SQLite write them,
// escapes included.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// Redact returns an error's text with every quoted part withheld.
func Redact(s string) string { return quoted.ReplaceAllString(s, `"…"`) }
