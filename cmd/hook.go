package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/limits"
)

// MaxPayload is the most hook stdin carryover reads; the rest is drained.
const MaxPayload = 8 << 20

// budget is the internal deadline for one snapshot: well under every
// agent's hook timeout (Claude's SessionEnd gets 1.5 s in total).
func budget(e *Env, class adapters.Class) time.Duration {
	if v := e.Getenv("CARRYOVER_DEADLINE_MS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return time.Duration(n) * time.Millisecond
		}
	}
	if class == adapters.ClassEnd {
		return 900 * time.Millisecond
	}
	return 2 * time.Second
}

// logOrStderr logs err; when the log cannot grow (read-only or full
// carryover home) the reason goes to stderr instead, which agents show only
// in their debug views for a hook that exits 0.
func logOrStderr(e *Env, log *logger, err error) {
	size := func() int64 {
		fi, err := os.Stat(log.path)
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	before := size()
	log.Printf("%v", err)
	if size() == before && e.Stderr != nil {
		msg := err.Error()
		if log.redact != nil {
			msg = log.redact(msg)
		}
		fmt.Fprintf(e.Stderr, "carryover: %s (and %s could not be written)\n", publish.OneLine(log.prefix+msg), log.path)
	}
}

func readPayload(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no stdin")
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return nil, fmt.Errorf("read hook stdin: %w", err)
	}
	if len(b) > MaxPayload {
		_, _ = io.Copy(io.Discard, r) // let the agent finish writing
		return nil, fmt.Errorf("hook stdin is larger than %d bytes; ignored", MaxPayload)
	}
	return b, nil
}

// readPayloadBy is readPayload bounded by deadline: an agent that never
// closes the hook's stdin cannot hold the hook past its budget.
func readPayloadBy(r io.Reader, deadline time.Time) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := readPayload(r)
		ch <- result{b, err}
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case res := <-ch:
		return res.b, res.err
	case <-t.C:
		return nil, errors.New("hook stdin was not closed before the deadline; nothing recorded for this event")
	}
}

// readHook reads the hook's stdin (by deadline) and parses it.
func readHook(e *Env, agent *adapters.Agent, event string, deadline time.Time) (adapters.Hook, error) {
	raw, err := readPayloadBy(e.Stdin, deadline)
	if err != nil {
		return adapters.Hook{}, err
	}
	h, err := agent.Adapter.ParseHook(event, raw, adapterEnv(e))
	if err != nil {
		return h, fmt.Errorf("%v (%d bytes); nothing recorded for this event", err, len(raw))
	} else if h.SessionID == "" {
		return h, errors.New("hook payload has no session id; nothing recorded for this event")
	}
	return h, nil
}

// prefetchRepo starts reading root's .git on another goroutine; the
// returned func waits for it.
func prefetchRepo(root string) func() *distill.Repo {
	ch := make(chan *distill.Repo, 1)
	go func() {
		defer func() {
			if recover() != nil {
				ch <- nil
			}
		}()
		ch <- distill.OpenRepo(root)
	}()
	return sync.OnceValue(func() *distill.Repo { return <-ch })
}

// hookAndLedger reads the hook's stdin while the ledger opens on another
// goroutine; when the agent's transcript is waited for (wait > 0), the
// ledger opens after the wait instead (an open ledger is locked).
func hookAndLedger(e *Env, log *logger, agent *adapters.Agent, event string, start time.Time, wait time.Duration, deadline time.Time) (adapters.Hook, chan result[*ledger.Ledger], error) {
	olog := *log // its own copy: the caller's prefix grows
	open := func() chan result[*ledger.Ledger] {
		return goValue(func() (*ledger.Ledger, error) { return openLedgerBy(e, &olog, deadline.Add(-lockMargin)) })
	}
	var ch chan result[*ledger.Ledger]
	if wait == 0 {
		ch = open()
	}
	h, err := readHook(e, agent, event, deadline.Add(-250*time.Millisecond))
	if err != nil {
		if ch != nil {
			closeLedger(<-ch)
		}
		return h, nil, err
	}
	if wait > 0 {
		awaitAgent(e, log, agent, h, start.Add(wait))
		ch = open()
	}
	return h, ch, nil
}

// awaitAgent waits, until at most until, for the agent to write the events
// before this hook to its transcript (Agent.AwaitFlush); giving up is
// logged, and what is on disk is read (the next event catches up).
func awaitAgent(e *Env, log *logger, agent *adapters.Agent, h adapters.Hook, until time.Time) {
	t0 := time.Now()
	if !agent.AwaitFlush(h, adapterEnv(e), until) {
		log.Printf("the agent had not written this hook's events to its transcript after %s; read what is there (the next event catches up)", time.Since(t0).Round(time.Millisecond))
	}
	log.prefix += fmt.Sprintf("flushwait=%s ", time.Since(t0).Round(time.Millisecond))
}

// openLedger opens the ledger, logging a recovery from corruption.
func openLedger(e *Env, log *logger) (*ledger.Ledger, error) {
	l, err := ledger.Open(e.Home())
	if err != nil {
		return nil, err
	}
	logRecovered(l, log)
	return l, nil
}

func logRecovered(l *ledger.Ledger, log *logger) {
	if n := l.RecoveryNote(); n != "" {
		log.Printf("%s", n)
	}
}

// goValue runs f on another goroutine; the channel yields its result (or
// the recovered panic as an error).
func goValue[T any](f func() (T, error)) chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- result[T]{err: fmt.Errorf("internal error (recovered): %v", r)}
			}
		}()
		v, err := f()
		ch <- result[T]{v, err}
	}()
	return ch
}

type result[T any] struct {
	v   T
	err error
}

// goWait runs f on another goroutine; the returned func waits for it once
// and logs its error.
func goWait(log *logger, f func() error) func() {
	ch := goValue(func() (struct{}, error) { return struct{}{}, f() })
	return sync.OnceFunc(func() {
		if o := <-ch; o.err != nil {
			log.Printf("publish: %v", o.err)
		}
	})
}

// writeFiles writes a rendered handoff's files (WriteProject) on another
// goroutine; the returned func waits for them.
func writeFiles(e *Env, l *ledger.Ledger, cfg Config, log *logger, proj *publish.Project, r *publish.Rendered) func() {
	guestWrites(e, l, proj, cfg, log, r)
	wp, wlog := *proj, *log // the goroutine logs with its own copy (the caller's prefix grows)
	wp.Logf = wlog.Printf
	return goWait(log, func() error { return wp.WriteProject(r.Text, r.Tool) })
}

func closeLedger(o result[*ledger.Ledger]) {
	if o.v != nil {
		o.v.Close()
	}
}

// foreignHost says why the agent's stub is running inside another agent
// ("" when it is not).
func foreignHost(a *adapters.Agent, e *Env) string {
	if a.ForeignHost == nil {
		return ""
	}
	return a.ForeignHost(e.Getenv)
}

// hookRoot is the project a hook payload names (distill.ProjectRoot).
func hookRoot(e *Env, h adapters.Hook) string {
	cwd := h.Cwd
	if cwd == "" {
		cwd = e.WorkDir
	}
	return distill.ProjectRoot(h.Project, cwd)
}

// projectFor resolves the hook's project and its config (problems logged)
// into what publishing needs.
func projectFor(e *Env, log *logger, h adapters.Hook) (*publish.Project, Config) {
	root := hookRoot(e, h)
	cfg, cerrs := LoadConfig(e, root)
	for _, ce := range cerrs {
		log.Printf("config: %v", ce)
	}
	redact := redactor(cfg)
	log.redact = redact
	for _, p := range limits.Of(cfg).Problems() {
		log.Printf("config: %s", p)
	}
	proj := &publish.Project{Root: root, Home: e.Home(), Now: e.Now(), Mode: cfg.Resume, Redact: redact, Logf: log.Printf,
		Pointer: cfg.PointerMode(), NotProject: publish.NotProject(root, e.UserHome())}
	lifecycleConfig(proj, cfg, log.Printf)
	return proj, cfg
}

// timedOut logs that the watchdog stopped waiting for snapshot. Session
// start still gets the last published handoff when the digests under the
// home say it is carryover's (no ledger needed).
func timedOut(e *Env, event string, fb *fallback, wlog *logger, start time.Time, budget time.Duration) {
	wlog.Printf("stopped waiting after %s (internal deadline %s): something the hook was reading or waiting for did not answer (a ledger locked by another process?); the next event catches up",
		time.Since(start).Round(time.Millisecond), budget)
	var out bytes.Buffer
	fb.inject(e, event, &out, wlog)
	writeInjection(e, out.Bytes(), wlog)
}

// republish decides whether this event re-distils the handoff and returns
// the one to write (nil: none). Tool events fire on every tool call: they
// record rows and mark the project pending, and the turn's end (Stop,
// SessionEnd, the next prompt or session start) publishes what is pending.
// At a CRITICAL context level (critical) tool events publish too: the
// handoff must be fresh on disk before the window fills.
func republish(l *ledger.Ledger, proj *publish.Project, log *logger, class adapters.Class, hadHandoff, critical bool, added int) *publish.Rendered {
	if class == adapters.ClassTool && (hadHandoff || proj.NotProject) && !critical {
		if added > 0 {
			logErr(log, "mark pending publish", l.MarkDirty(proj.Root, proj.Now))
		}
		return nil
	}
	dirty := l.Dirty(proj.Root)
	if added == 0 && !dirty && hadHandoff {
		return nil
	}
	r, err := refresh(l, proj, log)
	if dirty && err == nil {
		logErr(log, "clear pending publish", l.ClearDirty(proj.Root))
	}
	return r
}

// refresh folds the new rows into the project's distill state and renders
// the handoff when it changed (nil when it did not). The caller records it
// in the ledger (Rendered.Record) once it has started writing the files.
func refresh(l *ledger.Ledger, proj *publish.Project, log *logger) (*publish.Rendered, error) {
	st, notes, err := distill.Refresh(l, proj.Root, proj.Now)
	logNotes(log, notes)
	if err == nil {
		var r *publish.Rendered
		if r, err = proj.Render(l, st); err == nil {
			return r, nil
		}
	}
	log.Printf("publish: %v", err)
	return nil, err
}

func logNotes(log *logger, notes []string) {
	for _, n := range notes {
		log.Printf("%s", n)
	}
}

func logErr(log *logger, what string, err error) {
	if err != nil {
		log.Printf("%s: %v", what, err)
	}
}

func joinNames(names []string) string { return strings.Join(names, ", ") }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// redactor returns the redaction function for cfg (identity when off).
func redactor(cfg Config) func(string) string {
	if !cfg.RedactOn() {
		return func(s string) string { return s }
	}
	return redactString
}

// deliverHandoff injects the project's published handoff into out, once per
// session (a resumed session that holds this exact handoff does not get it
// twice), and records the delivery.
func deliverHandoff(e *Env, log *logger, l *ledger.Ledger, proj *publish.Project, agent *adapters.Agent, event string, h adapters.Hook, sessionID int64, out *bytes.Buffer) {
	text := proj.ReadHandoff(l)
	if text != "" && h.Source == "resume" && l.Delivered(proj.Root, publish.HeaderOf(text), sessionID) {
		log.Printf("session already holds this handoff; not injected again")
		return
	}
	d := proj.Deliver(l, agent, event, text, sessionID, h.Source == "resume")
	out.Write(d.Out)
	if d.Why != "" {
		log.Printf("%s", d.Why)
	}
	if d.Header != "" {
		_ = l.RecordDelivery(ledger.Delivery{Project: proj.Root, Header: d.Header, Tool: agent.Name, SessionID: sessionID, Via: "hook", At: e.Now()})
	}
}
