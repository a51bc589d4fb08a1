package api

import "unicode/utf8"

// Limits on the texts searchd stores, the same on every way in (POST
// /v1/messages, searchd import): a text over its limit is kept cut at a
// rune boundary and marked with TruncatedMarker, and counted (the
// "truncated" of BatchResult and of the import's report). They sit well
// above Discord's own limits, so real messages are never cut; they exist
// so that nothing grows without bound (one 64 MiB message would make
// every search answer holding it 134 MB and its embedding 4.3 GB).
const (
	MaxContentBytes = 16 << 10 // a message's text, forwards included: Discord allows 4,000 characters
	MaxNameBytes    = 400      // guild, channel and user names, kinds and types: Discord allows 100 characters
	MaxTopicBytes   = 4 << 10  // a channel topic: Discord allows 1,024 characters
	MaxMentions     = 250      // users one message mentions: beyond them, the rest are dropped
	MaxEmbeds       = 10       // link previews one update adds: Discord allows 10
)

// TruncatedMarker ends a text cut to its limit.
const TruncatedMarker = " […]"

// Clip returns s cut to at most max bytes at a rune boundary, ending in
// TruncatedMarker, and whether it had to cut.
func Clip(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max - len(TruncatedMarker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + TruncatedMarker, true
}
