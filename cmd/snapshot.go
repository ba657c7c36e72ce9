package cmd

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/service"
)

// Snapshot is the hook entry point. Whatever happens it returns normally:
// the only stdout is a valid injection (or nothing) and every problem goes
// to the log. The event itself is service.OnHook; this is the watchdog
// around it and the one write to stdout.
func Snapshot(e *Env, tool, event string) {
	start := time.Now()
	log := newLogger(e)
	log.Prefix = fmt.Sprintf("snapshot tool=%s event=%s ", tool, event)
	defer func() {
		if r := recover(); r != nil {
			log.Printf("internal error (recovered): %v", r)
		}
	}()
	var out []byte
	fb := &service.Fallback{}
	wlog := *log // the watchdog's own copy: OnHook grows log's prefix
	b := snapshotBudget(e, tool, event)
	finished, err := runBy(start.Add(b+watchdogGrace(b)), func() error {
		var err error
		out, err = service.OnHook(e.service(), tool, event, start, log, fb)
		return err
	})
	if !finished {
		// OnHook is left behind: the process exits. Session start still
		// gets the last published handoff when the digests under the home
		// say it is carryover's (no ledger needed).
		wlog.Printf("stopped waiting after %s (internal deadline %s): something the hook was reading or waiting for did not answer (a ledger locked by another process?); the next event catches up",
			time.Since(start).Round(time.Millisecond), b)
		writeInjection(e, fb.Inject(event, &wlog), &wlog)
		return
	}
	if err != nil {
		logOrStderr(e, log, err)
	}
	writeInjection(e, out, log) // one write: a valid injection
	log.Printf("done in %s", time.Since(start).Round(time.Millisecond))
}

// snapshotBudget is the internal deadline of tool's event (the default for
// an unknown tool).
func snapshotBudget(e *Env, tool, event string) time.Duration {
	if agent, ok := adapters.ByName(tool); ok {
		c := agent.Class(event)
		return service.Budget(e.Getenv, c) + agent.FlushWaitFor(c)
	}
	return service.Budget(e.Getenv, adapters.ClassOther)
}

// service is what the project service reads of the process.
func (e *Env) service() service.Env {
	return service.Env{Home: e.Home(), Agent: adapterEnv(e), Stdin: e.Stdin, Stderr: e.Stderr, WorkDir: e.WorkDir, Now: e.Now}
}

// logOrStderr logs err; when the log cannot grow (read-only or full
// carryover home) the reason goes to stderr instead, which agents show only
// in their debug views for a hook that exits 0.
func logOrStderr(e *Env, log *logger, err error) {
	size := func() int64 {
		fi, err := os.Stat(log.Path)
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	before := size()
	log.Printf("%v", err)
	if size() == before && e.Stderr != nil {
		msg := err.Error()
		if log.Redact != nil {
			msg = log.Redact(msg)
		}
		fmt.Fprintf(e.Stderr, "carryover: %s (and %s could not be written)\n", publish.OneLine(log.Prefix+msg), log.Path)
	}
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
