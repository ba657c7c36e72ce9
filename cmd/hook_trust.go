package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

// lockMargin is kept free before the hook's deadline while another process
// holds the ledger: ledger waits end this long before it, leaving time to
// inject the published handoff and exit.
const lockMargin = 300 * time.Millisecond

// watchdogGrace is how long past its deadline Snapshot waits for the
// snapshot before it gives up on it (see runBy). Every wait inside is
// bounded by the deadline already; this catches what is not (a flock, a
// hung filesystem).
const watchdogGrace = 100 * time.Millisecond

// runBy runs f on another goroutine and reports whether it returned before
// deadline. When it did not, f keeps running until the process exits.
func runBy(deadline time.Time, f func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// fallback is what Snapshot needs to inject the published handoff when the
// snapshot itself did not finish in time: the project and config, once the
// payload named them.
type fallback struct {
	mu      sync.Mutex
	project string
	cfg     Config
	ok      bool
}

func (f *fallback) set(project string, cfg Config) {
	f.mu.Lock()
	f.project, f.cfg, f.ok = project, cfg, true
	f.mu.Unlock()
}

// inject writes the session start injection from handoff.md alone,
// trusted by the digests under the carryover home (no ledger).
func (f *fallback) inject(e *Env, tool, event string, out *bytes.Buffer, log *logger) {
	f.mu.Lock()
	project, cfg, ok := f.project, f.cfg, f.ok
	f.mu.Unlock()
	log.Printf("deadline passed before the snapshot finished; this event's rows are read at the next event")
	if !ok || !isStartEvent(event) {
		return
	}
	repo := func() *distill.Repo { return nil } // no .git read: no staleness note
	inject(e, tool, event, project, readHandoff(e, project, nil, log), cfg, out, log, repo)
}

// openLedgerBy is openLedger with every wait for another process's lock
// bounded by deadline.
func openLedgerBy(e *Env, log *logger, deadline time.Time) (*ledger.Ledger, error) {
	l, err := ledger.OpenBy(e.Home(), deadline)
	if err != nil {
		return nil, err
	}
	logRecovered(l, log)
	return l, nil
}

// busyReason names a lock held by another process in words.
func busyReason(err error) error {
	if ledger.IsBusy(err) {
		return fmt.Errorf("the ledger is locked by another carryover process (a frozen hook, a long `carryover handoff`); gave up before the deadline, this event's rows are read at the next event (%w)", err)
	}
	return err
}

// checkHandoff says why b, the project's handoff.md, is not carryover's
// own ("" when it is); l may be nil.
func checkHandoff(e *Env, project string, b []byte, l *ledger.Ledger) string {
	var inLedger func(string) (bool, error)
	if l != nil {
		inLedger = func(d string) (bool, error) { return l.HandoffTrusted(project, d) }
	}
	return publish.CheckHandoff(b, e.Home(), project, inLedger)
}

// handoffTrusted reports whether the project's handoff.md is carryover's
// own, logging why not.
func handoffTrusted(e *Env, project string, l *ledger.Ledger, log *logger) bool {
	b, err := publish.ReadHandoffFile(project)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			log.Printf("read handoff: %v", err)
		}
		return false
	}
	if why := checkHandoff(e, project, b, l); why != "" {
		log.Printf("handoff.md in %s is not carryover's: %s; publishing from the ledger over it", project, why)
		return false
	}
	return true
}

// ignoreBrokenPipe makes a write to a stdout the agent already closed an
// error (EPIPE, logged) instead of a SIGPIPE that kills the hook with a
// non-zero status.
func ignoreBrokenPipe() { signal.Ignore(syscall.SIGPIPE) }

// writeInjection prints the injection; an agent that closed the hook's
// stdout early gets a log line, not a hook killed by SIGPIPE.
func writeInjection(e *Env, b []byte, log *logger) {
	if _, err := e.Stdout.Write(b); err != nil {
		log.Printf("write injection to stdout: %v (the agent closed it early?)", err)
	}
}
