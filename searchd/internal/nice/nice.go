// Package nice lowers CPU priority for background work (the embedding
// job's threads, an import), so that searches beside it go first.
//
// Nice 10 against nice 0 gets about a tenth of a contended core: a
// search's work goes first, yet the background still moves on a machine
// busy with other work (at 19 a batch took minutes). Failing is harmless:
// the work then competes as before.
package nice

// Level is the niceness background work runs at.
const Level = 10
