package index

import "golang.org/x/sys/cpu"

// useAVX2: the scan's dot products run 16 lanes at a time. In plain Go
// the scan ran at an eighth of the memory bandwidth (BenchmarkScanFloor):
// it was bound by one multiply-add per byte, not by memory.
var useAVX2 = cpu.X86.HasAVX2

// dot8AVX2 is dot8 over len(a) bytes, a multiple of 32, with b at least
// as long (dot8_amd64.s).
//
//go:noescape
func dot8AVX2(a, b []int8) int32

// dot8 is the inner product of int8 vectors.
func dot8(a, b []int8) int32 {
	b = b[:len(a)]
	n := len(a) &^ 31
	if !useAVX2 || n == 0 {
		return dot8Go(a, b)
	}
	return dot8AVX2(a[:n], b[:n]) + dot8Go(a[n:], b[n:])
}
