// Package segment cuts a channel's messages into conversation segments by
// the blog's three rules, and turns a segment into the text that is
// embedded.
package segment

import "time"

// Rules are the thresholds of the blog's time-and-reply segmentation.
type Rules struct {
	// ReplyWindow: a reply at most this long after its parent joins the
	// parent's segment (Rule 1). It caps how far a late reply can reach.
	ReplyWindow time.Duration
	// Gap: otherwise a message at most this long after the end of the
	// channel's current segment joins it (Rule 2); else it starts a new
	// segment (Rule 3).
	Gap time.Duration
}

// DefaultRules are the blog's: 24 hours and 30 minutes. 30 minutes sits
// just above the 90th percentile of its gaps between messages.
var DefaultRules = Rules{ReplyWindow: 24 * time.Hour, Gap: 30 * time.Minute}

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
	if parent != nil && abs(at-parent.CreatedAt) <= r.ReplyWindow.Microseconds() {
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
