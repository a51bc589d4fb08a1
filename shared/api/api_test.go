package api

import (
	"testing"
	"time"
)

// A message of attachments alone reads as what it carried.
func TestMessageText(t *testing.T) {
	for _, c := range []struct {
		content     string
		attachments int
		want        string
	}{
		{"a\nb  c", 0, "a b c"},
		{"look", 2, "look"},
		{"", 1, "(an attachment)"},
		{" \n", 3, "(3 attachments)"},
		{"", 0, ""},
	} {
		if got := MessageText(c.content, c.attachments); got != c.want {
			t.Errorf("MessageText(%q, %d) = %q, want %q", c.content, c.attachments, got, c.want)
		}
	}
}

func TestTimeNote(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2023, 10, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		r    QueryResponse
		want string
	}{
		{QueryResponse{}, ""},
		{QueryResponse{Time: &TimeSpan{day(6), day(20)}}, "from 2023-10-06 to 2023-10-20 (the time the question names, with a margin)"},
		{QueryResponse{TimeFallback: true}, "nothing from the time the question names: results from any time"},
	} {
		if got := c.r.TimeNote(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}
