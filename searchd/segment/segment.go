// Package segment cuts a channel's messages into conversations, by reply
// links (Linker) or the blog's three rules, and turns a conversation into
// the text that is embedded.
package segment

import (
	"fmt"
	"time"
)

// Rules say how a channel is cut into conversations.
type Rules struct {
	// ReplyWindow: a reply at most this long after its parent joins the
	// parent's segment (Rule 1). It caps how far a late reply can reach.
	ReplyWindow time.Duration
	// Gap: without a linker, a message at most this long after the end of
	// the channel's current segment joins it (Rule 2); else it starts a
	// new segment (Rule 3).
	Gap time.Duration
	// Linker, when set, places every other spoken message by its reply
	// link (see Linker): the blog's rules 2 and 3 give way to it.
	Linker *Linker
}

// Name describes the rules in force.
func (r Rules) Name() string {
	if r.Linker != nil {
		return fmt.Sprintf("reply links (Discord replies within %s, else the reply-link model v%d over the latest %d lines within %s)",
			r.ReplyWindow, r.Linker.Version, r.Linker.Window, time.Duration(r.Linker.Horizon*float64(time.Second)))
	}
	return fmt.Sprintf("blog rules (reply window %s, gap %s)", r.ReplyWindow, r.Gap)
}

// BlogRules are the blog's: 24 hours and 30 minutes. 30 minutes sits
// just above the 90th percentile of its gaps between messages.
var BlogRules = Rules{ReplyWindow: 24 * time.Hour, Gap: 30 * time.Minute}

// DefaultRules link each message to its parent: a Discord reply within
// 24 hours, else the one the reply-link model picks (or none).
var DefaultRules = Rules{ReplyWindow: 24 * time.Hour, Gap: 30 * time.Minute, Linker: DefaultLinker}

// Replies reports whether a reply to a message at parentAt, written at
// `at`, joins its parent's conversation (Rule 1).
func (r Rules) Replies(at, parentAt int64) bool {
	return abs(at-parentAt) <= r.ReplyWindow.Microseconds()
}

// IsSystem reports whether a message type is Discord's own notice (a
// join, a call, a pin, a thread start, a rename) rather than something
// said. A slash command's or a context menu command's reply
// (ChatInputCommand, ContextMenuCommand; "20" and "23" in
// DiscordChatExporter's exports, which name only the types it knows) is
// said: a bot answering a person, often with real content (a /faq answer,
// a looked-up link). sqlite's spokenTypes lists the same types.
func IsSystem(msgType string) bool {
	switch msgType {
	case "", "Default", "Reply", "ChatInputCommand", "ContextMenuCommand", "20", "23":
		return false
	}
	return true
}

// Span is what placing a message needs to know of a segment.
type Span struct {
	ID      int64
	StartAt int64 // µs
	EndAt   int64 // µs
}

// Parent is a message's reply parent, when it is stored in the same
// channel and belongs to a segment.
type Parent struct {
	CreatedAt int64 // µs
	SegmentID int64
}

// Place decides which segment a message created at `at` joins: its reply
// parent's (Rule 1), the channel's last segment (Rule 2), or, when it
// returns 0, a new one (Rule 3).
//
// "The channel's last segment" has two readings once a late reply has
// reopened an older segment, and each is right in its own case, so Rule 2
// tries both: first current, the channel's most recently started segment
// (the conversation going on, which a one-off reply to yesterday must not
// swallow), then previous, the segment of the channel's latest message
// before this one (after a silence, talk that follows a reply carries on
// the reopened conversation). Either may be nil.
func (r Rules) Place(at int64, parent *Parent, current, previous *Span) int64 {
	if parent != nil && r.Replies(at, parent.CreatedAt) {
		return parent.SegmentID
	}
	for _, s := range []*Span{current, previous} {
		if s != nil && at-s.EndAt <= r.Gap.Microseconds() {
			return s.ID
		}
	}
	return 0
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// Horizon is how far back in time a placement looks, replies aside: the
// linker's candidates, else the gap.
func (r Rules) Horizon() time.Duration {
	if r.Linker != nil {
		return max(r.Gap, time.Duration(r.Linker.Horizon*float64(time.Second)))
	}
	return r.Gap
}
