package embed

import "syscall"

// lowerThreadPriority lowers the calling OS thread's CPU priority to nice
// 10: on Linux, PRIO_PROCESS with a thread ID applies to that thread
// alone. Against a thread of nice 0 it gets about a tenth of a core, so a
// query's inference goes first, yet the job still moves on a machine busy
// with other work (at 19 it got 1.5 %: a batch took minutes). Failing is
// harmless: the job then competes as before.
func lowerThreadPriority() {
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 10)
}
