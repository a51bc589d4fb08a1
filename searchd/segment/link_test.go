package segment

import "testing"

func TestShippedLinker(t *testing.T) {
	if DefaultLinkerErr != nil || DefaultLinker == nil || DefaultRules.Linker == nil {
		t.Fatalf("shipped linker.json: %v", DefaultLinkerErr)
	}
}
