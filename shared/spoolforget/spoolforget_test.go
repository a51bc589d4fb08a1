package spoolforget

import "testing"

// Names.any finds an ID wherever the batch's JSON quotes it, and no ID of
// which only a longer one, or a bare number, is there.
func TestNamesAnyFindsQuotedIDs(t *testing.T) {
	names := Names{"123": {}, "9": {}}
	for data, want := range map[string]bool{
		`{"deletes":["123"]}`:                             true,
		`{"messages":[{"id":"5","content":"x"}],"g":"9"}`: true,
		`{"a":"x","b":"123"}`:                             true,
		`{"id":"1234"}`:                                   false, // a longer ID
		`{"id":"0123"}`:                                   false,
		`{"n":123,"content":"call 9 now"}`:                false, // a bare number; digits in text
		`{"content":"ends in 12","id":"77"}`:              false,
		`{"e":"","id":"9"}`:                               true,
		`"123`:                                            false, // cut short
	} {
		if got := names.any([]byte(data)); got != want {
			t.Errorf("any(%s) = %v, want %v", data, got, want)
		}
	}
}
