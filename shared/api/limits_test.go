package api

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in  string
		max int
		cut bool
	}{
		{"short", 16, false},
		{strings.Repeat("a", 16), 16, false},
		{strings.Repeat("a", 17), 16, true},
		{strings.Repeat("보일러", 10), 16, true}, // 3-byte runes: the cut moves back to a boundary
		{strings.Repeat("😀", 100), 17, true},
	} {
		got, cut := Clip(tt.in, tt.max)
		if cut != tt.cut || len(got) > tt.max || !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q (%d bytes), %v", tt.in, tt.max, got, len(got), cut)
		}
		if cut && (!strings.HasSuffix(got, TruncatedMarker) || !strings.HasPrefix(tt.in, strings.TrimSuffix(got, TruncatedMarker))) {
			t.Errorf("Clip(%q, %d) = %q: not a marked prefix", tt.in, tt.max, got)
		}
		if !cut && got != tt.in {
			t.Errorf("Clip(%q, %d) changed it to %q", tt.in, tt.max, got)
		}
	}
}
