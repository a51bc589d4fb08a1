//go:build !amd64

package index

// dot8 is the inner product of int8 vectors.
func dot8(a, b []int8) int32 { return dot8Go(a, b) }
