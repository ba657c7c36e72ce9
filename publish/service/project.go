// Package service is the project service: for one project it holds the
// ledger, the repository, the configuration in effect, the clock and the
// log, and offers the operations hooks and commands need (OnHook for a
// hook event; the manual handoff, status, history, decisions and task for
// the commands). It sits above publish and its feature packages
// (publish/limits, publish/resume import publish's renderer and writer),
// so the hook's choreography — sync → distil once → render → write →
// record → limits → deliver — reads in one place (hook.go).
package service

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/lifecycle"
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

// configPath is the user's config file.
func (env Env) configPath() string { return filepath.Join(env.Home, "config.toml") }

// Project is one project as the service sees it: the writer's settings
// (publish.Project: root, home, clock, mode, redaction, pointer policy),
// the configuration in effect, the ledger and the log.
type Project struct {
	*publish.Project
	Config config.Config
	// ConfigErrs are the configuration's problems (logged too).
	ConfigErrs []error
	env        Env
	ledger     *ledger.Ledger // nil until opened (or when it could not be)
	log        *Log
	// state is the project's distill State once an operation refreshed it:
	// every writer of the same event or command reads it (one distillation).
	state *distill.State
}

// Redactor returns the redaction function for cfg (identity when off).
func Redactor(cfg config.Config) func(string) string {
	if !cfg.RedactOn() {
		return func(s string) string { return s }
	}
	return redact.String
}

// Open resolves root's configuration (problems logged to log, which may be
// nil) into a Project; the ledger is opened by the operation that needs it.
func Open(env Env, root string, log *Log) *Project {
	cfg, cerrs := config.Load(env.configPath(), env.Agent.Home, root)
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
	pp := &publish.Project{Root: root, Home: env.Home, Now: env.Now(), Mode: cfg.Resume, Redact: red, Logf: log.Printf,
		Pointer: cfg.PointerMode(), Lifecycle: lifecycle.Begin, NotProject: publish.NotProject(root, env.Agent.Home)}
	if cfg.ExpireAfter != "" {
		if d, err := publish.ParseAge(cfg.ExpireAfter); err == nil {
			pp.ExpireAfter = d
		} else {
			log.Printf("config expire_after: %v (default 7d used)", err)
		}
	}
	pp.HistoryKeep = cfg.HistoryKeep
	return &Project{Project: pp, Config: cfg, ConfigErrs: cerrs, env: env, log: log}
}

// Close closes the project's ledger.
func (p *Project) Close() {
	if p.ledger != nil {
		p.ledger.Close()
		p.ledger = nil
	}
}

// Refresh re-distils the project's handoff from the ledger and writes it
// (what a hook does at the end of a turn; `carryover run` after Aider).
func (p *Project) Refresh() error {
	l, err := ledger.Open(p.env.Home)
	if err != nil {
		return err
	}
	defer l.Close()
	p.log.recovered(l)
	p.ledger = l
	defer func() { p.ledger = nil }()
	if p.Repo == nil {
		p.Repo = distill.OpenRepoAsync(p.Root)
	}
	r, err := p.refresh()
	if err != nil || r == nil {
		return err
	}
	if p.Pointer == publish.PointerAuto && !p.NotProject {
		p.PointerFor = p.pointerAgents()
	}
	r.Record()
	return p.WriteProject(r.Text, r.Tool)
}

// refresh folds the new rows into the project's distill state — the one
// distillation of the event — and renders the handoff when it changed
// (nil when it did not). The caller records it in the ledger
// (Rendered.Record) once it has started writing the files.
func (p *Project) refresh() (*publish.Rendered, error) {
	st, err := p.distilled()
	if err == nil {
		var r *publish.Rendered
		if r, err = p.Render(p.ledger, st); err == nil {
			return r, nil
		}
	}
	p.log.Printf("publish: %v", err)
	return nil, err
}

// recovered logs the ledger's recovery from damage, when it recovered.
func (l *Log) recovered(led *ledger.Ledger) {
	if n := led.RecoveryNote(); n != "" {
		l.Printf("%s", n)
	}
}

// distilled is the project's distill State with the ledger's new rows
// folded in: refreshed once per event or command, then shared by every
// writer (one distillation).
func (p *Project) distilled() (*distill.State, error) {
	if p.state == nil {
		st, notes, err := distill.Refresh(p.ledger, p.Root, p.Now)
		p.log.notes(notes)
		if err != nil {
			return nil, err
		}
		p.state = st
	}
	return p.state, nil
}

// LogMax is the size at which carryover.log is rotated to carryover.log.1.
const LogMax = 1 << 20

// Log appends one line per message to $CARRYOVER_HOME/carryover.log.
// Messages name events, ids, counts and errors; they never carry transcript
// content. Logging failures are swallowed: the hook path must not break.
type Log struct {
	Path   string
	now    func() time.Time
	Prefix string
	Redact func(string) string
	// Muted: a hook in an ignored project writes no log line.
	Muted bool
}

// NewLog is the log under home.
func NewLog(home string, now func() time.Time) *Log {
	return &Log{Path: filepath.Join(home, "carryover.log"), now: now}
}

// Printf writes one line (nothing when l is nil or muted).
func (l *Log) Printf(format string, args ...any) {
	if l == nil || l.Muted {
		return
	}
	// One line, no terminal escapes: session ids, paths and error text
	// come from hook payloads and transcripts (publish.OneLine).
	msg := publish.OneLine(l.Prefix + fmt.Sprintf(format, args...))
	if l.Redact != nil {
		msg = l.Redact(msg)
	}
	line := l.now().UTC().Format(time.RFC3339) + " " + msg + "\n"
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o700); err != nil {
		return
	}
	if fi, err := os.Stat(l.Path); err == nil && fi.Size() > LogMax {
		_ = os.Rename(l.Path, l.Path+".1")
	}
	f, err := os.OpenFile(l.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line)
	_ = f.Close()
}

// notes logs each note.
func (l *Log) notes(notes []string) {
	for _, n := range notes {
		l.Printf("%s", n)
	}
}

// err logs err, when there is one, as what failed.
func (l *Log) err(what string, err error) {
	if err != nil {
		l.Printf("%s: %v", what, err)
	}
}

func loadAgentRecords(home string) map[string]AgentRecord {
	m := map[string]AgentRecord{}
	if b, err := safefile.ReadFile(filepath.Join(home, AgentsFile), 64<<10); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// pointerAgents need the pointer block in the project (pointer = "auto"):
// of the installed agents and those with sessions here, each without a
// reliable start injection (as install recorded it; else: no envelope),
// and each whose injection no delivery receipt shows arriving here.
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
	p.log.err("read delivery receipts", err)
	for _, t := range missed {
		if !slices.Contains(out, t) {
			p.log.Printf("pointer block: %s's start injection did not reach its session here (no transcript receipt)", t)
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}
