package main

import (
	"os"
	"strconv"
	"syscall"
)

// lowerPriority lowers the whole process to nice 10. On Linux a
// priority belongs to a thread, and a new thread inherits its creator's:
// lowering every thread there is now lowers every later one too. An
// import is throughput work; searches beside it are someone waiting.
// Failing is harmless: the import then competes as before.
func lowerPriority() {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			syscall.Setpriority(syscall.PRIO_PROCESS, tid, 10)
		}
	}
}
