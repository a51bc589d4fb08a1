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
// parent's (Rule 1), the channel's current segment (Rule 2), or, when it
// returns 0, a new one (Rule 3). current is the channel's most recently
// started segment at or before `at`, or nil.
func (r Rules) Place(at int64, parent *Parent, current *Span) int64 {
	if parent != nil && abs(at-parent.CreatedAt) <= r.ReplyWindow.Microseconds() {
		return parent.SegmentID
	}
	if current != nil && at-current.EndAt <= r.Gap.Microseconds() {
		return current.ID
	}
	return 0
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
