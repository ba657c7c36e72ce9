package cmd

import (
	"fmt"
	"time"
)

// watchdogGrace is how long past its internal deadline a snapshot may run
// before the hook gives up on it: half the budget, at most 500 ms, so
// Claude's SessionEnd (0.9 s budget) still ends within the 1.5 s Claude
// gives the whole hook. The snapshot's own deadline (stdin, ingest) keeps
// an ordinary slow run well inside it; the watchdog is for what has no
// deadline of its own: a read that blocks on a network file system, a
// ledger held by another process, anything not foreseen. Every read on the
// hook path is also non-blocking and bounded (publish/safefile).
func watchdogGrace(budget time.Duration) time.Duration { return min(budget/2, 500*time.Millisecond) }

// runBy runs fn on another goroutine and waits for it until deadline. ok
// is false when the deadline came first: fn is then abandoned (the process
// exits next; its writes are atomic renames and ledger transactions,
// which an exit in the middle leaves whole, as the kill -9 tests check).
func runBy(deadline time.Time, fn func() error) (ok bool, err error) {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("internal error (recovered): %v", r)
			}
		}()
		done <- fn()
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case err := <-done:
		return true, err
	case <-t.C:
		return false, nil
	}
}
