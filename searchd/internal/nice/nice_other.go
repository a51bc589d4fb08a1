//go:build !linux

package nice

import "syscall"

// Thread does nothing: elsewhere a priority belongs to the whole process.
func Thread() {}

// Process lowers the whole process (macOS and the BSDs).
func Process() { syscall.Setpriority(syscall.PRIO_PROCESS, 0, Level) }
