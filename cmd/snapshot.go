package cmd

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/limits"
)

// Snapshot is the hook entry point. Whatever happens it returns normally:
// the only stdout is a valid injection (or nothing) and every problem goes
// to the log. This file is the choreography (what overlaps what); the
// decisions are ledger.Sync, distill.Refresh and publish.Project's.
func Snapshot(e *Env, tool, event string) {
	start := time.Now()
	log := newLogger(e)
	log.prefix = fmt.Sprintf("snapshot tool=%s event=%s ", tool, event)
	defer func() {
		if r := recover(); r != nil {
			log.Printf("internal error (recovered): %v", r)
		}
	}()
	var out bytes.Buffer
	fb := &fallback{}
	wlog := *log // the watchdog's own copy: snapshot grows log's prefix
	b := snapshotBudget(e, tool, event)
	finished, err := runBy(start.Add(b+watchdogGrace(b)), func() error { return snapshot(e, tool, event, start, log, &out, fb) })
	if !finished {
		timedOut(e, event, fb, &wlog, start, b) // snapshot is left behind: the process exits
		return
	}
	if err != nil {
		logOrStderr(e, log, err)
	}
	writeInjection(e, out.Bytes(), log) // one write: a valid injection
	log.Printf("done in %s", time.Since(start).Round(time.Millisecond))
}

func snapshot(e *Env, tool, event string, start time.Time, log *logger, out *bytes.Buffer, fb *fallback) error {
	agent, ok := adapters.ByName(tool)
	if !ok || agent.Name != tool {
		return fmt.Errorf("unknown --tool %q (known: %s)", tool, joinNames(adapters.Names()))
	}
	class := agent.Class(event)
	wait := agent.FlushWaitFor(class)
	deadline := start.Add(budget(e, class) + wait)
	if skipHook(e, agent, log, deadline) { // another agent's hook, or an ignored project
		return nil
	}
	h, ledgerCh, err := hookAndLedger(e, log, agent, event, start, wait, deadline)
	if err != nil {
		return err
	}
	taken := false
	defer func() {
		if !taken { // returned before taking it
			closeLedger(<-ledgerCh)
		}
	}()
	if ignoredHook(e, h, log) {
		return nil
	}
	proj, cfg := projectFor(e, log, h)
	fb.set(agent, proj)
	log.prefix += "session=" + shortID(h.SessionID) + " "
	// A tool event on a project that had a handoff only stores rows (below).
	hadHandoff := !proj.NotProject && fileExists(publish.HandoffPath(proj.Root))
	// The project's .git is read on the other core while this one ingests
	// (the handoff's git facts and the staleness note need it), and the
	// distiller's regexps compile there, when this event may publish.
	proj.Repo = sync.OnceValue(func() *distill.Repo { return distill.OpenRepo(proj.Root) })
	if class != adapters.ClassTool || !hadHandoff {
		proj.Repo = prefetchRepo(proj.Root)
		go distill.Warm()
	}
	inject := func(text string) string {
		w, hdr := proj.InjectFile(agent, event, text) // only the ledger-less paths use it
		out.Write(w)
		return hdr
	}
	o := <-ledgerCh
	taken = true
	if o.err != nil {
		if class == adapters.ClassStart { // without a ledger, still deliver the existing handoff
			inject(proj.ReadHandoff(nil))
		}
		return busyReason(o.err)
	}
	o.v.SetDeadline(deadline.Add(-lockMargin))
	// A handoff.md carryover did not write is published over at the turn's
	// end; tool events (every tool call) skip the read and hash.
	if hadHandoff && class != adapters.ClassTool && !proj.HandoffTrusted(o.v) {
		hadHandoff = false
	}
	// Handoff files are written on another goroutine while this one records
	// them in the ledger and finishes with it (see Leave); both are done before
	// the hook exits or injects.
	l, waitWrites := o.v, func() {}
	defer func() {
		if l != nil { // nil after a failed rebuild
			l.Leave() // the process exits next (see Leave)
		}
		waitWrites()
	}()
	nl, rep, err := ledger.Sync(l, ledger.IngestOptions{Adapter: agent.Adapter, Hook: h, Env: adapterEnv(e),
		Project: proj.Root, Deadline: deadline.Add(-250 * time.Millisecond), Now: e.Now(), Redact: proj.Redact})
	logNotes(log, rep.Notes)
	if l = nl; l == nil && class == adapters.ClassStart {
		inject(proj.ReadHandoff(nil)) // the ledger could not be rebuilt
	} else if ledger.IsBusy(err) && class == adapters.ClassStart {
		inject(proj.ReadHandoff(l)) // another process holds the ledger
	}
	if err != nil {
		return busyReason(err)
	}
	tIngest := time.Since(start)
	level, pct := limits.ContextOf(l, rep.SessionID, agent, limits.Of(cfg)) // at CRITICAL the handoff must be fresh
	if r := republish(l, proj, log, class, hadHandoff, level == distill.ContextCritical, rep.Total); r != nil {
		waitWrites = writeFiles(e, l, cfg, log, proj, r)
		r.Record() // the ledger's records of it, while the files are written
	}
	log.prefix += fmt.Sprintf("rows+%d ingest=%s publish=%s ", rep.Total, tIngest.Round(time.Millisecond), (time.Since(start) - tIngest).Round(time.Millisecond))

	deliver := func() {
		waitWrites() // the handoff being written is the one to inject
		deliverHandoff(e, log, l, proj, agent, event, h, rep.SessionID, out)
	}
	walls := actOnWalls(e, log, cfg, l, proj, agent, class, h, rep, level, pct)
	defer tellWalls(e, log, agent, event, walls, out)
	switch {
	case class == adapters.ClassStart && agent.DeferStartInjection != nil && agent.DeferStartInjection(h, e.Getenv):
		// The agent drops this event's output: deliver with the next prompt, once.
		logErr(log, "mark pending injection", l.MarkPendingInject(rep.SessionID, e.Now()))
	case class == adapters.ClassStart:
		deliver()
	case class == adapters.ClassPrompt:
		if ok, err := l.TakePendingInject(rep.SessionID); err == nil && ok {
			h.Source = "resume"
			deliver()
		}
	}
	return nil
}
