package cmd

import (
	"bytes"
	"fmt"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

// lockMargin is kept free before the hook's deadline while another process
// holds the ledger: ledger waits end this long before it, leaving time to
// inject the published handoff and exit.
const lockMargin = 300 * time.Millisecond

// fallback is what Snapshot needs to inject the published handoff when the
// snapshot itself did not finish in time: the agent and project, once the
// payload named them.
type fallback struct {
	mu    sync.Mutex
	agent *adapters.Agent
	proj  publish.Project
	ok    bool
}

func (f *fallback) set(agent *adapters.Agent, proj *publish.Project) {
	f.mu.Lock()
	f.agent, f.proj, f.ok = agent, *proj, true
	f.mu.Unlock()
}

// inject writes the session start injection from handoff.md alone,
// trusted by the digests under the carryover home (no ledger, no .git).
func (f *fallback) inject(e *Env, event string, out *bytes.Buffer, log *logger) {
	f.mu.Lock()
	agent, proj, ok := f.agent, f.proj, f.ok
	f.mu.Unlock()
	if !ok || agent.Class(event) != adapters.ClassStart {
		return
	}
	proj.Logf = log.Printf
	proj.Repo = func() *distill.Repo { return nil }              // no staleness note
	w, _ := proj.InjectFile(agent, event, proj.ReadHandoff(nil)) // the banner from the verified header
	out.Write(w)
}

// openLedgerBy is openLedger with every wait for another process's lock
// bounded by deadline.
func openLedgerBy(e *Env, log *logger, deadline time.Time) (*ledger.Ledger, error) {
	l, err := ledger.OpenBy(e.Home(), deadline)
	if err != nil {
		return nil, err
	}
	l.MapReads()
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

// writeInjection prints the injection; an agent that closed the hook's
// stdout early gets a log line, not a hook killed by SIGPIPE.
func writeInjection(e *Env, b []byte, log *logger) {
	if len(b) == 0 {
		return
	}
	if _, err := e.Stdout.Write(b); err != nil {
		log.Printf("write injection to stdout: %v (the agent closed it early?)", err)
	}
}

// ignoreBrokenPipe makes a write to a stdout the agent already closed an
// error (EPIPE, logged) instead of a SIGPIPE that kills the hook with a
// non-zero status.
func ignoreBrokenPipe() { signal.Ignore(syscall.SIGPIPE) }
