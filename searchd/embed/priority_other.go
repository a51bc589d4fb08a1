//go:build !linux

package embed

// lowerThreadPriority is Linux-only; elsewhere the job's single thread
// competes with searches at normal priority.
func lowerThreadPriority() {}
