// Package service is the project service: for one project it holds the ledger, the repository, the configuration in
// effect, the clock and the log, and offers what hooks (OnHook) and commands (commands.go, store.go) need. It sits
// above publish and its feature packages, so the hook's choreography — sync → distil once → render → write → record →
// limits → deliver — reads in one place: this file, which holds the whole hook path.
package service

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/lifecycle"
	"github.com/carryover/carryover/publish/limits"
	"github.com/carryover/carryover/publish/redact"
	"github.com/carryover/carryover/publish/safefile"
)

// Env is what the service reads of the process; cmd builds it once.
type Env struct {
	Home    string       // carryover's home ($CARRYOVER_HOME)
	Agent   adapters.Env // what adapters read: the environment, the user's home
	Stdin   io.Reader
	Stderr  io.Writer
	WorkDir string
	Now     func() time.Time
}

func (env Env) configPath() string { return filepath.Join(env.Home, "config.toml") }

// Project is one project as the service sees it: the writer's settings (publish.Project: root, home, clock, mode,
// redaction, pointer policy), the configuration in effect, the ledger and the log.
type Project struct {
	*publish.Project
	Config     config.Config
	ConfigErrs []error // the configuration's problems (logged too)
	env        Env
	ledger     *ledger.Ledger // nil until opened (or when it could not be)
	log        *Log
	// state is the project's distill State once an operation refreshed it: every writer of the same event or command
	// reads it (one distillation).
	state *distill.State
}

// Redactor returns the redaction function for cfg (identity when off).
func Redactor(cfg config.Config) func(string) string {
	if !cfg.RedactOn() {
		return func(s string) string { return s }
	}
	return redact.String
}

// Open resolves root's configuration (problems logged to log, which may be nil) into a Project; the ledger is opened by
// the operation that needs it.
func Open(env Env, root string, log *Log) *Project {
	global, errs := config.Load(env.configPath(), env.Agent.Home, "")
	return open(env, root, log, global, errs)
}

// open is Open with the user's config already read (global, its problems gerrs): a hook reads the file once per event.
func open(env Env, root string, log *Log, cfg config.Config, gerrs []error) *Project {
	cerrs := slices.Clone(gerrs)
	if root != "" {
		var perrs []error
		cfg, perrs = cfg.WithProject(root)
		cerrs = append(cerrs, perrs...)
	}
	for _, ce := range cerrs {
		log.Printf("config: %v", ce)
	}
	red := Redactor(cfg)
	if log != nil {
		log.Redact = red
	}
	for _, p := range cfg.Walls().Problems() {
		log.Printf("config: %s", p)
	}
	pp := &publish.Project{Root: root, Home: env.Home, Now: env.Now(), Mode: cfg.Resume, Redact: red, Logf: log.Printf, HistoryKeep: cfg.HistoryKeep,
		Pointer: cfg.PointerMode(), NotProject: publish.NotProject(root, env.Agent.Home)}
	if cfg.ExpireAfter != "" {
		if d, err := publish.ParseAge(cfg.ExpireAfter); err == nil {
			pp.ExpireAfter = d
		} else {
			log.Printf("config expire_after: %v (default 7d used)", err)
		}
	}
	return &Project{Project: pp, Config: cfg, ConfigErrs: cerrs, env: env, log: log}
}

func (p *Project) Close() {
	if p.ledger != nil {
		p.ledger.Close()
		p.ledger = nil
	}
}

// Refresh re-distils the project's handoff from the ledger and writes it (what a hook does at the end of a turn;
// `carryover run` after Aider).
func (p *Project) Refresh() error {
	l, err := ledger.Open(p.env.Home)
	if err != nil {
		return err
	}
	defer l.Close()
	logRecovered(p.log, l)
	p.ledger = l
	defer func() { p.ledger = nil }()
	if p.Repo == nil {
		p.Repo = distill.OpenRepoAsync(p.Root)
	}
	r, lc, err := p.refresh()
	if err != nil || r == nil {
		return err
	}
	if p.Pointer == publish.PointerAuto && !p.NotProject {
		p.PointerFor = p.pointerAgents()
	}
	lc.Record(r.Text)
	return p.WriteProject(r.Text, r.Tool)
}

// refresh folds the new rows into the distill state (the event's one distillation) and renders the handoff when it
// changed; the caller records it (lc.Record) once it has started writing the files.
func (p *Project) refresh() (*publish.Rendered, publish.Started, error) {
	st, err := p.distilled()
	if err == nil {
		var r *publish.Rendered
		var lc publish.Started
		if r, lc, err = p.render(st); err == nil {
			return r, lc, nil
		}
	}
	p.log.Printf("publish: %v", err)
	return nil, publish.Started{}, err
}

// render is publish's two steps around the lifecycle's: the handoff to render, its place in the lifecycle
// (lifecycle.Begin), the text.
func (p *Project) render(st *distill.State) (*publish.Rendered, publish.Started, error) {
	h, native, err := p.Prepare(p.ledger, st)
	if err != nil || h == nil {
		return nil, publish.Started{}, err
	}
	lc := lifecycle.Begin(p.Project, p.ledger, *h, native)
	return p.Render(p.ledger, *h, native, lc), lc, nil
}

// distilled is the project's State with the ledger's new rows folded in, once per event or command, shared by every
// writer.
func (p *Project) distilled() (*distill.State, error) {
	if p.state == nil {
		st, notes, err := distill.Refresh(p.ledger, p.Root, p.Now)
		p.log.Notes(notes)
		if err != nil {
			return nil, err
		}
		p.state = st
	}
	return p.state, nil
}

// AgentsFile records, per agent install set up, the version it found and whether its specs/tools.toml row needs the
// pointer block: the hook reads this small file instead of the table (specs.Load takes ~2 ms).
const AgentsFile = "agents.json"

// AgentRecord is one agent's line in AgentsFile.
type AgentRecord struct {
	Version string `json:"version,omitempty"`
	Pointer bool   `json:"pointer,omitempty"`
}

func loadAgentRecords(home string) map[string]AgentRecord {
	m := map[string]AgentRecord{}
	b, _ := safefile.ReadFile(filepath.Join(home, AgentsFile), 64<<10) // nil on error: Unmarshal then leaves m empty
	_ = json.Unmarshal(b, &m)
	return m
}

// SaveAgentRecords merges recs into home's AgentsFile (install).
func SaveAgentRecords(home string, recs map[string]AgentRecord) error {
	all := loadAgentRecords(home)
	maps.Copy(all, recs)
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return publish.WriteAtomic(filepath.Join(home, AgentsFile), append(b, '\n'))
}

// pointerAgents need the pointer block here (pointer = "auto"): of the installed agents and those with sessions here,
// each without a reliable start injection (as install recorded; else no envelope), and each whose injection no delivery
// receipt shows arriving here.
func (p *Project) pointerAgents() []string {
	tools := slices.Clone(p.Config.Tools)
	if ts, err := p.ledger.ProjectTools(p.Root); err == nil {
		tools = append(tools, ts...)
	}
	recs := loadAgentRecords(p.env.Home)
	var out []string
	for _, t := range tools {
		need := false
		if r, ok := recs[t]; ok {
			need = r.Pointer
		} else if a, ok := adapters.ByName(t); ok {
			need = a.Envelope == adapters.EnvelopeNone
		}
		if need && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	missed, err := p.ledger.MissedInjections(p.Root)
	p.log.Err("read delivery receipts", err)
	for _, t := range missed {
		if !slices.Contains(out, t) {
			p.log.Printf("pointer block: %s's start injection did not reach its session here (no transcript receipt)", t)
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// lockMargin: ledger waits for another process's lock end this long before the hook's deadline, leaving time to inject
// the published handoff and exit.
const lockMargin = 300 * time.Millisecond

// Budget is the internal deadline for one hook event: well under every agent's hook timeout (Claude's SessionEnd gets
// 1.5 s in total).
func Budget(getenv func(string) string, class adapters.Class) time.Duration {
	if n, err := strconv.Atoi(getenv("CARRYOVER_DEADLINE_MS")); err == nil && n > 0 {
		return time.Duration(n) * time.Millisecond
	}
	if class == adapters.ClassEnd {
		return 900 * time.Millisecond
	}
	return 2 * time.Second
}

// event is one hook event of one project, as OnHook carries it through.
type event struct {
	*Project
	agent      *adapters.Agent
	name       string // the agent's event name
	class      adapters.Class
	hook       adapters.Hook
	rep        ledger.SyncReport
	out        *bytes.Buffer // the hook's stdout, written once by the caller
	deadline   time.Time
	hadHandoff bool // the project has a handoff.md carryover wrote
}

// handoff is the project's handoff distilled this event: the State the refresh folded, or (when this event did not
// publish) one Refresh now.
func (ev *event) handoff() (distill.Handoff, error) {
	st, err := ev.distilled()
	if err != nil {
		return distill.Handoff{}, err
	}
	return st.Handoff(distill.Options{Project: ev.Root}), nil
}

// OnHook is one hook event: read the payload (while the ledger opens), sync, distil once, render, write, record, act on
// limits, deliver. It returns the hook's stdout (a valid injection or nothing) and why it stopped early (for the log);
// fb learns the project once the payload names it (the watchdog's).
func OnHook(env Env, tool, name string, start time.Time, log *Log, fb *Fallback) ([]byte, error) {
	var out bytes.Buffer
	err := onHook(env, tool, name, start, log, fb, &out)
	return out.Bytes(), err
}

func onHook(env Env, tool, name string, start time.Time, log *Log, fb *Fallback, out *bytes.Buffer) error {
	agent, ok := adapters.ByName(tool)
	if !ok || agent.Name != tool {
		return fmt.Errorf("unknown --tool %q (known: %s)", tool, strings.Join(adapters.Names(), ", "))
	}
	class := agent.Class(name)
	wait := agent.FlushWaitFor(class)
	deadline := start.Add(Budget(env.Agent.Getenv, class) + wait)
	// The user's config, read once per event: the ignore list for the working directory now and the payload's project
	// below, then under the project's own file (open).
	global, gerrs := config.Load(env.configPath(), env.Agent.Home, "")
	if skipHook(env, global, agent, log, deadline) { // another agent's hook, or an ignored project
		return nil
	}
	h, ledgerCh, err := hookAndLedger(env, log, agent, name, start, wait, deadline)
	if err != nil {
		return err
	}
	o, taken := result[*ledger.Ledger]{}, false
	defer func() {
		if !taken { // returned before taking it
			closeLedger(<-ledgerCh)
		}
	}()
	root := hookRoot(env, h)
	if log.Muted = slices.ContainsFunc([]string{h.Cwd, root}, global.Ignores); log.Muted { // without a log line
		return nil
	}
	ev := &event{Project: open(env, root, log, global, gerrs), agent: agent, name: name, class: class, hook: h, out: out, deadline: deadline}
	fb.Set(agent, ev.Project.Project)
	log.Prefix += "session=" + publish.ShortID(h.SessionID) + " "
	ev.prefetch()
	o, taken = <-ledgerCh, true
	if o.err != nil {
		if class == adapters.ClassStart { // without a ledger, still deliver the existing handoff
			ev.injectFile(nil)
		}
		return busyReason(o.err)
	}
	o.v.SetDeadline(deadline.Add(-lockMargin))
	ev.ledger = o.v
	return ev.run(start)
}

// prefetch reads the project's .git (git facts, staleness note) on the other core while this one ingests, when this event may publish (a tool event where a handoff exists only stores rows).
func (ev *event) prefetch() {
	ev.hadHandoff = !ev.NotProject && publish.Exists(publish.HandoffPath(ev.Root))
	root := ev.Root
	ev.Repo = sync.OnceValue(func() *distill.Repo { return distill.OpenRepo(root) })
	if ev.class != adapters.ClassTool || !ev.hadHandoff {
		ev.Repo = distill.OpenRepoAsync(root)
	}
}

// injectFile writes the injection of handoff.md alone, trusted by l's records or (l nil) the digests under the home:
// the ledger-less paths.
func (ev *event) injectFile(l *ledger.Ledger) {
	w, _ := ev.InjectFile(ev.agent, ev.name, ev.ReadHandoff(l))
	ev.out.Write(w)
}

// run is the event once the ledger is open: sync → refresh → write → record → limits → deliver.
func (ev *event) run(start time.Time) error {
	// A handoff.md carryover did not write is published over at the turn's end; tool events (every tool call) skip the
	// read and hash.
	if ev.hadHandoff && ev.class != adapters.ClassTool && !ev.HandoffTrusted(ev.ledger) {
		ev.hadHandoff = false
	}
	// Handoff files are written on another goroutine while this one records them in the ledger (see Leave); both end
	// before the hook exits or injects.
	waitWrites := func() error { return nil }
	defer func() {
		if ev.ledger != nil { // nil after a failed rebuild
			ev.ledger.Leave() // the process exits next (see Leave)
		}
		_ = waitWrites()
	}()
	if err := ev.sync(); err != nil {
		return err
	}
	tIngest := time.Since(start)
	level, pct := limits.ContextOf(ev.ledger, ev.rep.SessionID, ev.agent, ev.Config.Walls()) // at CRITICAL the handoff must be fresh
	r, lc := ev.republish(level == distill.ContextCritical)
	if r != nil {
		waitWrites = ev.writeFiles(r)
		lc.Record(r.Text) // the ledger's records of it, while the files are written
	}
	ev.log.Prefix += fmt.Sprintf("rows+%d ingest=%s publish=%s ", ev.rep.Total, tIngest.Round(time.Millisecond), (time.Since(start) - tIngest).Round(time.Millisecond))
	walls := ev.actOnWalls(level, pct)
	defer ev.tellWalls(walls)
	ev.inject(func() string {
		// The handoff being written is the one to inject: once on disk, its text is this event's, not read back from
		// the file.
		if err := waitWrites(); err == nil && r != nil && !ev.NotProject {
			return r.Text
		}
		return ev.ReadHandoff(ev.ledger)
	})
	return nil
}

// inject delivers the handoff (text waits for it) at a session start, or at the first prompt of an agent that drops its
// start event's output.
func (ev *event) inject(text func() string) {
	switch {
	case ev.class == adapters.ClassStart && ev.agent.DeferStartInjection != nil && ev.agent.DeferStartInjection(ev.hook, ev.env.Agent.Getenv):
		// The agent drops this event's output: deliver with the next prompt, once.
		ev.log.Err("mark pending injection", ev.ledger.MarkPendingInject(ev.rep.SessionID, ev.env.Now()))
	case ev.class == adapters.ClassStart:
		ev.deliver(text())
	case ev.class == adapters.ClassPrompt:
		if ok, err := ev.ledger.TakePendingInject(ev.rep.SessionID); err == nil && ok {
			ev.hook.Source = "resume"
			ev.deliver(text())
		}
	}
}

// sync reads the agent's new transcript lines into the ledger. Without a ledger (it could not be rebuilt, or another
// process holds it) a session start still gets the published handoff.
func (ev *event) sync() error {
	// A payload's transcript that the project's git tracks came with the
	// repository, as a tracked session file does (not picked by list).
	if p, _ := filepath.Abs(ev.hook.TranscriptPath); ev.hook.TranscriptPath != "" && adapters.InProject(p, ev.Root) && (Tracker{}).Tracked(ev.Root, p) {
		ev.log.Printf("transcript %s: the project's git tracks it (it came with the repository); not read", p)
		ev.hook.TranscriptPath = ""
	}
	nl, rep, err := ledger.Sync(ev.ledger, ledger.IngestOptions{Adapter: ev.agent.Adapter, Hook: ev.hook, Env: ev.env.Agent,
		Project: ev.Root, Deadline: ev.deadline.Add(-250 * time.Millisecond), Now: ev.env.Now(), Redact: ev.Redact})
	ev.log.Notes(rep.Notes)
	ev.rep = rep
	if ev.ledger = nl; nl == nil && ev.class == adapters.ClassStart {
		ev.injectFile(nil) // the ledger could not be rebuilt
	} else if ledger.IsBusy(err) && ev.class == adapters.ClassStart {
		ev.injectFile(nl) // another process holds the ledger
	}
	return busyReason(err) // nil without an error
}

// republish re-distils the handoff when this event should and returns the one to write (nil: none). Tool events (every
// tool call) only record rows and mark the project pending for the turn's end, except at CRITICAL (the handoff must be
// on disk before the window fills).
func (ev *event) republish(critical bool) (*publish.Rendered, publish.Started) {
	added := ev.rep.Total
	if ev.class == adapters.ClassTool && (ev.hadHandoff || ev.NotProject) && !critical {
		if added > 0 {
			ev.log.Err("mark pending publish", ev.ledger.MarkDirty(ev.Root, ev.Now))
		}
		return nil, publish.Started{}
	}
	dirty := ev.ledger.Dirty(ev.Root)
	if added == 0 && !dirty && ev.hadHandoff {
		return nil, publish.Started{}
	}
	r, lc, err := ev.refresh()
	if dirty && err == nil {
		ev.log.Err("clear pending publish", ev.ledger.ClearDirty(ev.Root))
	}
	return r, lc
}

// writeFiles writes a rendered handoff's files (WriteProject) on another goroutine; the returned func waits for them
// and says whether they were.
func (ev *event) writeFiles(r *publish.Rendered) func() error {
	switch {
	case ev.NotProject:
		ev.Held = r.Text // held for injection: no file
	case ev.Pointer == publish.PointerAuto:
		ev.PointerFor = ev.pointerAgents()
	}
	wp, wlog := *ev.Project.Project, *ev.log // the goroutine logs with its own copy (the caller's prefix grows)
	wp.Logf = wlog.Printf
	ch := goValue(func() (struct{}, error) { return struct{}{}, wp.WriteProject(r.Text, r.Tool) })
	return sync.OnceValue(func() error {
		o := <-ch
		ev.log.Err("publish", o.err)
		return o.err
	})
}

// deliver injects text, the published handoff, once per session (a resumed session holding it does not get it twice),
// and records the delivery.
func (ev *event) deliver(text string) {
	d := lifecycle.Deliver(ev.Project.Project, ev.ledger, ev.agent, ev.name, text, ev.rep.SessionID, ev.hook.Source == "resume")
	ev.out.Write(d.Out)
	if d.Why != "" {
		ev.log.Printf("%s", d.Why)
	}
}

// actOnWalls records and acts on what this event says about rate limits and the context window (limits.Act), sets the
// "previous session stopped at a limit" note for a start or prompt, and signals `carryover run`.
func (ev *event) actOnWalls(level distill.ContextLevel, pct int) limits.Outcome {
	walls := limits.Act(limits.Options{Ledger: ev.ledger, Project: ev.Project.Project, Agent: ev.agent, Class: ev.class, Hook: ev.hook,
		SessionID: ev.rep.SessionID, Found: ev.rep.Limits, Config: ev.Config.Walls(), Level: level, Percent: pct, Handoff: ev.handoff})
	ev.log.Notes(walls.Notes)
	if ev.class == adapters.ClassStart || ev.class == adapters.ClassPrompt {
		ev.Note = limits.StoppedLine(ev.ledger, ev.Root, ev.rep.SessionID, ev.Now, time.Local)
	}
	// Tell a `carryover run` wrapper (CARRYOVER_RUN_ID in the agent's environment) which session it started and when
	// its context reaches CRITICAL.
	if run := ev.env.Agent.Getenv(limits.RunEnv); run != "" {
		lvl := walls.Level
		if !ev.Config.Walls().RestartAtCritical() {
			lvl = ""
		}
		note, err := limits.RunHook(ev.env.Home, run, ev.env.Agent.Getenv(limits.RunPIDEnv), ev.agent.Name, ev.hook.SessionID, ev.class == adapters.ClassStart, lvl, walls.Percent, ev.env.Now())
		if note != "" {
			ev.log.Printf("%s", note)
		}
		ev.log.Err("carryover run signal", err)
	}
	return walls
}

// tellWalls adds limits.Act's agent note and user notice to the hook's output (stdout JSON when the agent shows a
// systemMessage and nothing was injected, else stderr).
func (ev *event) tellWalls(w limits.Outcome) {
	if w.Notice != "" {
		ev.log.Printf("limit: %s", w.Notice)
	}
	if w.AgentNote != "" {
		ev.log.Printf("context %d %% (%s): agent told", w.Percent, w.Level)
	}
	stdout, stderr := limits.Output(ev.agent, ev.name, w, ev.out.Len() > 0)
	ev.out.Write(stdout)
	if stderr != "" && ev.env.Stderr != nil {
		_, _ = io.WriteString(ev.env.Stderr, stderr)
	}
}

// hookAndLedger reads the hook's stdin while the ledger opens on another goroutine; when the agent's transcript is
// waited for (wait > 0), the ledger opens after the wait instead (an open ledger is locked).
func hookAndLedger(env Env, log *Log, agent *adapters.Agent, name string, start time.Time, wait time.Duration, deadline time.Time) (adapters.Hook, chan result[*ledger.Ledger], error) {
	olog := *log // its own copy: the caller's prefix grows
	open := func() chan result[*ledger.Ledger] {
		return goValue(func() (*ledger.Ledger, error) {
			// Every wait for another process's lock is bounded by the deadline.
			l, err := ledger.OpenBy(env.Home, deadline.Add(-lockMargin))
			if err != nil {
				return nil, err
			}
			l.MapReads()
			logRecovered(&olog, l)
			return l, nil
		})
	}
	var ch chan result[*ledger.Ledger]
	if wait == 0 {
		ch = open()
	}
	h, err := readHook(env, agent, name, deadline.Add(-250*time.Millisecond))
	if err != nil {
		if ch != nil {
			closeLedger(<-ch)
		}
		return h, nil, err
	}
	if wait > 0 {
		// Wait for the agent to write the events before this hook to its transcript (Agent.AwaitFlush); giving up is
		// logged, and what is on disk is read (the next event catches up).
		t0 := time.Now()
		if !agent.AwaitFlush(h, env.Agent, start.Add(wait)) {
			log.Printf("the agent had not written this hook's events to its transcript after %s; read what is there (the next event catches up)", time.Since(t0).Round(time.Millisecond))
		}
		log.Prefix += fmt.Sprintf("flushwait=%s ", time.Since(t0).Round(time.Millisecond))
		ch = open()
	}
	return h, ch, nil
}

// busyReason names a lock held by another process in words.
func busyReason(err error) error {
	if ledger.IsBusy(err) {
		return fmt.Errorf("the ledger is locked by another carryover process (a frozen hook, a long `carryover handoff`); gave up before the deadline, this event's rows are read at the next event (%w)", err)
	}
	return err
}

func closeLedger(o result[*ledger.Ledger]) {
	if o.v != nil {
		o.v.Close()
	}
}

// MaxPayload is the most hook stdin carryover reads; the rest is drained.
const MaxPayload = 8 << 20

// readPayload reads the hook's stdin by deadline: an agent that never closes it cannot hold the hook past its budget.
func readPayload(r io.Reader, deadline time.Time) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no stdin")
	}
	ch := goValue(func() ([]byte, error) {
		b, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
		if err != nil {
			return nil, fmt.Errorf("read hook stdin: %w", err)
		} else if len(b) > MaxPayload {
			_, _ = io.Copy(io.Discard, r) // let the agent finish writing
			return nil, fmt.Errorf("hook stdin is larger than %d bytes; ignored", MaxPayload)
		}
		return b, nil
	})
	select {
	case res := <-ch:
		return res.v, res.err
	case <-time.After(time.Until(deadline)):
		return nil, errors.New("hook stdin was not closed before the deadline; nothing recorded for this event")
	}
}

func readHook(env Env, agent *adapters.Agent, name string, deadline time.Time) (adapters.Hook, error) {
	raw, err := readPayload(env.Stdin, deadline)
	if err != nil {
		return adapters.Hook{}, err
	}
	h, err := agent.Adapter.ParseHook(name, raw, env.Agent)
	if err != nil {
		return h, fmt.Errorf("%v (%d bytes); nothing recorded for this event", err, len(raw))
	} else if h.SessionID == "" {
		return h, errors.New("hook payload has no session id; nothing recorded for this event")
	}
	return h, nil
}

// Fallback is what the hook's watchdog needs to inject the published handoff when the event did not finish in time: the
// agent and project.
type Fallback struct {
	mu    sync.Mutex
	agent *adapters.Agent // nil until Set
	proj  publish.Project
}

// Set names the agent and project (OnHook, once the payload named them).
func (f *Fallback) Set(agent *adapters.Agent, proj *publish.Project) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.agent, f.proj = agent, *proj
	f.mu.Unlock()
}

// Inject is the session start's injection from handoff.md alone, trusted by the digests under the home (no ledger, no
// .git); nil for any other event or before the payload named the project.
func (f *Fallback) Inject(event string, log *Log) []byte {
	f.mu.Lock()
	agent, proj := f.agent, f.proj
	f.mu.Unlock()
	if agent == nil || agent.Class(event) != adapters.ClassStart {
		return nil
	}
	proj.Logf = log.Printf
	proj.Repo = func() *distill.Repo { return nil }              // no staleness note
	w, _ := proj.InjectFile(agent, event, proj.ReadHandoff(nil)) // the banner from the verified header
	return w
}

// skipHook: this hook does nothing, its stub running inside another agent (logged) or in an ignored project (stdin
// drained so the agent's write never fails; nothing stored, logged or written).
func skipHook(env Env, global config.Config, agent *adapters.Agent, log *Log, deadline time.Time) bool {
	if agent.ForeignHost != nil {
		if why := agent.ForeignHost(env.Agent.Getenv); why != "" {
			log.Printf("skipped: %s", why)
			return true
		}
	}
	if log.Muted = global.Ignores(env.WorkDir); log.Muted {
		_, _ = readPayload(env.Stdin, deadline)
	}
	return log.Muted
}

// hookRoot is the project a hook payload names (distill.ProjectRoot).
func hookRoot(env Env, h adapters.Hook) string {
	return distill.ProjectRoot(h.Project, cmp.Or(h.Cwd, env.WorkDir))
}

// goValue runs f on another goroutine; the channel yields its result (or the recovered panic as an error).
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

// Log is safefile.Log: the hook's log, a leaf every feature calls back.
type Log = safefile.Log

// LogMax is the size at which carryover.log is rotated.
const LogMax = safefile.LogMax

func NewLog(home string, now func() time.Time) *Log {
	return &Log{Path: filepath.Join(home, "carryover.log"), Now: now, Clean: publish.OneLine}
}

// logRecovered logs the ledger's recovery from damage, when it recovered.
func logRecovered(log *Log, l *ledger.Ledger) {
	if n := l.RecoveryNote(); n != "" {
		log.Printf("%s", n)
	}
}
