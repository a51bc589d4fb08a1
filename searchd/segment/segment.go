// Package segment cuts a channel's messages into conversation segments by
// the blog's three rules, and turns a segment into the text that is
// embedded.
package segment

import (
	"fmt"
	"time"
)

// Rules are the thresholds of the blog's time-and-reply segmentation.
type Rules struct {
	// ReplyWindow: a reply at most this long after its parent joins the
	// parent's segment (Rule 1). It caps how far a late reply can reach.
	ReplyWindow time.Duration
	// Gap: otherwise a message at most this long after the end of the
	// channel's current segment joins it (Rule 2); else it starts a new
	// segment (Rule 3).
	Gap time.Duration

	// Busy turns on the busy-channel segmenter (see PlaceBusy) where at
	// least BusyAuthors people wrote in the BusySpan before a message
	// (looking at most BusyWindow messages back). Quiet channels keep the
	// blog's rules.
	Busy        bool
	BusyAuthors int
	BusySpan    time.Duration
	BusyWindow  int
}

// Name describes the rules in force.
func (r Rules) Name() string {
	s := fmt.Sprintf("blog rules (reply window %s, gap %s)", r.ReplyWindow, r.Gap)
	if r.Busy {
		s += fmt.Sprintf(", busy channels (%d+ authors within %s) by replies, addressees and authors", r.BusyAuthors, r.BusySpan)
	}
	return s
}

// BlogRules are the blog's: 24 hours and 30 minutes. 30 minutes sits
// just above the 90th percentile of its gaps between messages.
var BlogRules = Rules{ReplyWindow: 24 * time.Hour, Gap: 30 * time.Minute}

// DefaultRules are the blog's for quiet channels and the busy-channel
// segmenter where six or more people wrote in the last five minutes: a
// group of friends, even one whose members come and go over a day, rarely
// has six talking at once; a busy public channel always does.
var DefaultRules = Rules{ReplyWindow: 24 * time.Hour, Gap: 30 * time.Minute,
	Busy: true, BusyAuthors: 6, BusySpan: 5 * time.Minute, BusyWindow: 60}

// WasBusy reports whether a channel counts as busy at time `at`, given its
// latest messages (authors and times, oldest first): whether, at any
// moment of the last half hour that they cover, BusyAuthors people wrote
// within one BusySpan. Looking back that far keeps a busy channel busy
// through a lull of a few quiet minutes, where switching to the time
// rules would merge the conversations on either side.
func WasBusy(authors, times []int64, at int64, r Rules) bool {
	span, memory := r.BusySpan.Microseconds(), (30 * time.Minute).Microseconds()
	start := 0
	for start < len(times) && at-times[start] > memory {
		start++
	}
	count := map[int64]int{}
	lo := start
	for hi := start; hi < len(times); hi++ {
		count[authors[hi]]++
		for times[hi]-times[lo] > span {
			if count[authors[lo]]--; count[authors[lo]] == 0 {
				delete(count, authors[lo])
			}
			lo++
		}
		if len(count) >= r.BusyAuthors {
			return true
		}
	}
	return false
}

// IsSystem reports whether a message type is Discord's own notice (a
// join, a pin, a thread start) rather than something a person said.
func IsSystem(msgType string) bool {
	switch msgType {
	case "", "Default", "Reply":
		return false
	}
	return true
}

// Pace describes a busy channel's recent activity around a message.
type Pace struct {
	// MedianGap is the median gap between the channel's recent messages.
	MedianGap time.Duration
}

// window scales a busy channel's attention span to its pace: people keep
// talking to each other for about twenty of the channel's typical gaps,
// between one and thirty minutes.
func (p Pace) window(factor float64) int64 {
	w := time.Duration(factor * float64(p.MedianGap))
	return min(max(w, time.Minute), 30*time.Minute).Microseconds()
}

// Seen is the segment of a recent message and when it was written.
type Seen struct {
	At        int64 // µs
	SegmentID int64
}

// Busy holds what the busy-channel segmenter knows about a message:
// whom it addresses and when they last spoke, when its author was last
// addressed, and when its author last spoke. Nil entries are unknown.
type Busy struct {
	Addressees  []Seen // the latest message of each user the message mentions
	AddressedBy *Seen  // the latest message that mentioned the author
	Own         *Seen  // the author's own latest message
	Pace        Pace
}

// PlaceBusy places a message in a busy channel, where several
// conversations run at once and time alone says little (on the Ubuntu IRC
// corpus almost no gap exceeds 30 minutes). In order:
//
//  1. a reply joins its parent's segment (as Rule 1);
//  2. a message that names someone joins the conversation that person
//     last spoke in, if they spoke within the attention span;
//  3. a message by someone recently named joins the conversation that
//     named them;
//  4. a message joins its author's own latest conversation, if recent;
//  5. otherwise it starts a new conversation.
//
// The attention span follows the channel's own pace (Pace.window). It
// returns 0 for a new segment.
func (r Rules) PlaceBusy(at int64, parent *Parent, b Busy) int64 {
	if parent != nil && abs(at-parent.CreatedAt) <= r.ReplyWindow.Microseconds() {
		return parent.SegmentID
	}
	span := b.Pace.window(20)
	var best *Seen
	for i := range b.Addressees {
		if s := &b.Addressees[i]; at-s.At <= span && (best == nil || s.At > best.At) {
			best = s
		}
	}
	if best != nil {
		return best.SegmentID
	}
	if s := b.AddressedBy; s != nil && at-s.At <= span {
		return s.SegmentID
	}
	if s := b.Own; s != nil && at-s.At <= span/2 {
		return s.SegmentID
	}
	return 0
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
