package segment

import (
	"strings"
	"testing"
	"time"
)

func us(d time.Duration) int64 { return d.Microseconds() }

func TestPlace(t *testing.T) {
	r := DefaultRules
	cur := &Span{ID: 7, StartAt: 0, EndAt: us(time.Hour)}
	tests := []struct {
		name   string
		at     time.Duration
		parent *Parent
		cur    *Span
		prev   *Span
		want   int64
	}{
		{"rule 2: within the gap joins the current segment", time.Hour + 30*time.Minute, nil, cur, cur, 7},
		{"rule 3: past the gap starts a new segment", time.Hour + 31*time.Minute, nil, cur, cur, 0},
		{"rule 3: first message of a channel", 0, nil, nil, nil, 0},
		{"rule 1: a reply within 24h follows its parent", 20 * time.Hour, &Parent{CreatedAt: 0, SegmentID: 3}, cur, cur, 3},
		{"rule 1 beats rule 2", time.Hour + time.Minute, &Parent{CreatedAt: us(time.Minute), SegmentID: 3}, cur, cur, 3},
		{"a reply past 24h falls back to rule 2", 25*time.Hour + time.Hour, &Parent{CreatedAt: 0, SegmentID: 3}, &Span{ID: 9, EndAt: us(26*time.Hour - time.Minute)}, nil, 9},
		{"a reply past 24h and past the gap starts anew", 30 * time.Hour, &Parent{CreatedAt: 0, SegmentID: 3}, cur, cur, 0},
		{"exactly 24h still follows", 24 * time.Hour, &Parent{CreatedAt: 0, SegmentID: 3}, nil, nil, 3},
		{"rule 2 prefers the current conversation", time.Hour + time.Minute, nil, cur, &Span{ID: 2, EndAt: us(time.Hour)}, 7},
		{"rule 2 falls back to the reopened segment", 3 * time.Hour, nil, cur, &Span{ID: 2, EndAt: us(3*time.Hour - time.Minute)}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Place(us(tt.at), tt.parent, tt.cur, tt.prev); got != tt.want {
				t.Errorf("Place = %d, want %d", got, tt.want)
			}
		})
	}
}

// The blog's example: five messages within a minute, two conversations
// interleaved. Without reply links, the time rules keep them together (the
// blog's point: time alone cannot split them); with the reply from 2005 to
// 2001 it still lands in the same, single segment.
func TestPlaceBlogExample(t *testing.T) {
	r := DefaultRules
	base := us(15 * time.Hour)
	var seg *Span
	next := int64(1)
	for i, off := range []time.Duration{0, 10 * time.Second, 20 * time.Second, 30 * time.Second, time.Minute} {
		at := base + us(off)
		var parent *Parent
		if i == 4 {
			parent = &Parent{CreatedAt: base, SegmentID: seg.ID}
		}
		id := r.Place(at, parent, seg, seg)
		if id == 0 {
			if seg != nil {
				t.Fatalf("message %d started a second segment", 2001+i)
			}
			seg = &Span{ID: next, StartAt: at}
			next++
			id = seg.ID
		}
		if id != seg.ID {
			t.Fatalf("message %d went to segment %d", 2001+i, id)
		}
		seg.EndAt = at
	}
}

func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"see https://example.com/a?b=c and www.x.org", "see [link] and [link]"},
		{"hi <@123> <@!456> in <#789> cc <@&42>", "hi [mention] [mention] in [mention] cc [mention]"},
		{"@민수 이거 봐", "[mention] 이거 봐"},
		{"mail me at a@b.com", "mail me at a@b.com"},
		{"lol <:pepe:1234> <a:dance:99>", "lol [emoji] [emoji]"},
		{"웃겨 :pepe_laugh:", "웃겨 [emoji]"},
		{"meet at 10:30:00 ok", "meet at 10:30:00 ok"},
		{"  several\n\nlines\there ", "several lines here"},
		{"@everyone 모여", "[mention] 모여"},
	}
	for _, tt := range tests {
		if got := Clean(tt.in); got != tt.want {
			t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	if got := Text([]string{"ㅋㅋ", "ㅇㅇ", "lol"}); got != "" {
		t.Errorf("short segment embedded as %q", got)
	}
	got := Text([]string{"보일러 터졌어", "", "https://x.y/z", "수리 기사님 오후에 오신대"})
	want := "보일러 터졌어 / [link] / 수리 기사님 오후에 오신대"
	if got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	many := make([]string, 250)
	for i := range many {
		many[i] = "the boiler broke again"
	}
	if n := strings.Count(Text(many), Separator) + 1; n != MaxTextMessages {
		t.Errorf("embedded %d messages, want the first %d", n, MaxTextMessages)
	}
}
