package nice

import (
	"os"
	"strconv"
	"syscall"
)

// Thread lowers the calling OS thread: on Linux a priority belongs to a
// thread, and PRIO_PROCESS with a thread ID applies to it alone.
func Thread() {
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), Level)
}

// Process lowers every thread of the process; a new thread inherits its
// creator's priority, so every later one is lowered too.
func Process() {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			syscall.Setpriority(syscall.PRIO_PROCESS, tid, Level)
		}
	}
}
