package api

import "testing"

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
