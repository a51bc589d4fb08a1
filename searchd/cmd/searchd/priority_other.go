//go:build !linux

package main

import "syscall"

// lowerPriority lowers the process to nice 10: on macOS and the BSDs a
// priority belongs to the whole process. See priority_linux.go.
func lowerPriority() {
	syscall.Setpriority(syscall.PRIO_PROCESS, 0, 10)
}
