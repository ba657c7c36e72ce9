// Package limits decides what the hook does when a session runs into a
// wall: a rate limit or quota (adapters.Limit signals found by the ingest
// or carried by the hook payload), or a filling context window. It
// records each event once in the ledger, writes .carryover/RESUME.md (the
// resume prompt `carryover handoff` builds, universal target) and says what
// to tell the user and the agent. It never touches the clipboard.
package limits

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/resume"
)

// Config is the [limits] and [context] sections of config.toml
// (publish.LimitsConfig, publish.ContextConfig) with their defaults.
type Config struct {
	Limits  publish.LimitsConfig
	Context publish.ContextConfig
}

// Of is the [limits]/[context] configuration of a loaded config.
func Of(c publish.Config) Config { return Config{Limits: c.Limits, Context: c.Context} }

// Defaults.
const (
	DefaultWarnPercent = 90
	DefaultMaxRestarts = 10
)

// AutoResume reports whether RESUME.md is written on a limit.
func (c Config) AutoResume() bool { return c.Limits.AutoResume == nil || *c.Limits.AutoResume }

// WarnPercent is the approaching-limit threshold.
func (c Config) WarnPercent() float64 {
	if p := c.Limits.WarnPercent; p != nil && *p > 0 && *p <= 100 {
		return *p
	}
	return DefaultWarnPercent
}

// MaxRestarts is `carryover run`'s bound.
func (c Config) MaxRestarts() int {
	if n := c.Limits.MaxRestarts; n != nil && *n >= 0 {
		return *n
	}
	return DefaultMaxRestarts
}

// RestartAtCritical reports whether `carryover run` restarts at CRITICAL.
func (c Config) RestartAtCritical() bool {
	return c.Context.RestartAtCritical == nil || *c.Context.RestartAtCritical
}

// Thresholds are the context thresholds (the defaults when the configured
// ones do not rise strictly within 1..100).
func (c Config) Thresholds() distill.Thresholds {
	if t := c.configured(); t.Valid() {
		return t
	}
	return distill.DefaultThresholds
}

// configured is the defaults overlaid with what the config sets, valid or not.
func (c Config) configured() distill.Thresholds {
	t := distill.DefaultThresholds
	if c.Context.EarlyWarn != nil {
		t.EarlyWarn = *c.Context.EarlyWarn
	}
	if c.Context.Warn != nil {
		t.Warn = *c.Context.Warn
	}
	if c.Context.Critical != nil {
		t.Critical = *c.Context.Critical
	}
	return t
}

// Problems lists what is wrong with the configuration (for status and the log).
func (c Config) Problems() []string {
	var out []string
	if p := c.Limits.WarnPercent; p != nil && (*p <= 0 || *p > 100) {
		out = append(out, fmt.Sprintf("[limits] warn_percent = %v is not within 1..100; %d is used", *p, DefaultWarnPercent))
	}
	if n := c.Limits.MaxRestarts; n != nil && *n < 0 {
		out = append(out, fmt.Sprintf("[limits] max_restarts = %d is negative; %d is used", *n, DefaultMaxRestarts))
	}
	if t := c.configured(); !t.Valid() {
		d := distill.DefaultThresholds
		out = append(out, fmt.Sprintf("[context] early_warn < warn < critical within 1..100 is required (got %d/%d/%d); %d/%d/%d are used",
			t.EarlyWarn, t.Warn, t.Critical, d.EarlyWarn, d.Warn, d.Critical))
	}
	return out
}

// ResumePath is a project's RESUME.md.
func ResumePath(project string) string { return filepath.Join(publish.Dir(project), "RESUME.md") }

// Window is the context window a session's usage is measured against:
// what the agent reported, else the agent's descriptor.
func Window(s ledger.Session, agent *adapters.Agent) int64 {
	if s.TokensMax > 0 {
		return s.TokensMax
	}
	if agent != nil {
		return int64(agent.ContextWindow)
	}
	return 0
}

// Level is a session's context level and fill in percent.
func Level(s ledger.Session, agent *adapters.Agent, cfg Config) (distill.ContextLevel, int) {
	return distill.Level(s.TokensUsed, Window(s, agent), cfg.Thresholds())
}

// Options is one hook's view of a possible wall.
type Options struct {
	Ledger  *ledger.Ledger
	Project *publish.Project
	Agent   *adapters.Agent
	Class   adapters.Class
	Hook    adapters.Hook
	// SessionID is the hook session's ledger id.
	SessionID int64
	// Found are the signals the ingest read (any session of the project).
	Found  []ledger.FoundLimit
	Config Config
	// Loc is the user's time zone for reset times (nil: time.Local).
	Loc *time.Location
	// Level and Percent are the session's context level when the caller
	// already looked it up (ContextOf); Level "" makes Act look it up.
	Level   distill.ContextLevel
	Percent int
}

// Outcome is what the hook should say and did.
type Outcome struct {
	// Notice is for the user (Claude Code's systemMessage, else stderr).
	Notice string
	// AgentNote is for the agent (a tool event's additionalContext).
	AgentNote string
	// Resume is the RESUME.md written ("" none).
	Resume string
	// Level and Percent are the session's context fill.
	Level   distill.ContextLevel
	Percent int
	// Notes are for the log.
	Notes []string
}

// Act records the hook's limit signals and context level and decides what
// to say; the caller has already refreshed the handoff (see Critical).
func Act(o Options) Outcome {
	a := limitAct{o: o}
	now := o.Project.Now
	if h := o.Hook.Limit; h != nil {
		a.record("hook:"+o.Hook.Event+":"+strconv.FormatInt(now.UnixMilli(), 10), "", "", *h, now)
	}
	for _, f := range o.Found {
		a.found(f)
	}
	a.out.Level, a.out.Percent = o.Level, o.Percent
	if a.out.Level == "" {
		a.out.Level, a.out.Percent = ContextOf(o.Ledger, o.SessionID, o.Agent, o.Config)
	}
	critical := a.context()
	if a.announce == nil && !critical {
		return a.out
	}
	if o.Config.AutoResume() {
		if err := WriteResume(o.Ledger, o.Project, o.Agent.Name, o.Hook.SessionID, o.SessionID); err != nil {
			a.out.Notes = append(a.out.Notes, fmt.Sprintf("write RESUME.md: %v", err))
		} else {
			a.out.Resume = ResumePath(o.Project.Root)
		}
	}
	if a.announce != nil {
		a.out.Notice = Notice(a.announce, a.out.Resume != "", now, o.Loc)
	}
	return a.out
}

// limitAct is one Act call: what it says and the limit it announces.
type limitAct struct {
	o        Options
	out      Outcome
	announce *adapters.Limit
}

// record records a limit event of session native of tool (the hook
// session when ""); the hook session's own new event is announced, the
// strongest winning.
func (a *limitAct) record(key, tool, native string, lim adapters.Limit, at time.Time) {
	o := a.o
	sid := o.SessionID
	tool = cmp.Or(tool, o.Agent.Name)
	if native != "" && (native != o.Hook.SessionID || tool != o.Agent.Name) {
		// Read by the catch-up from another session's file.
		s, err := o.Ledger.SessionIn(tool, native, o.Project.Root)
		if err != nil {
			return
		}
		sid = s.ID
	}
	if at.IsZero() {
		at = o.Project.Now
	}
	fresh, err := o.Ledger.RecordLimit(ledger.LimitEvent{SessionID: sid, Key: key, Project: o.Project.Root, Tool: tool, Limit: lim, At: at})
	if err != nil {
		a.out.Notes = append(a.out.Notes, fmt.Sprintf("record limit: %v", err))
		return
	}
	if fresh && sid == o.SessionID && (a.announce == nil || (lim.Reached && !a.announce.Reached)) {
		a.announce = &lim
	}
}

// found records a signal the ingest read; an approaching limit under the
// warning share is none, and is recorded once per session.
func (a *limitAct) found(f ledger.FoundLimit) {
	key := f.Key
	if !f.Limit.Reached {
		if f.Limit.UsedPercent < a.o.Config.WarnPercent() {
			return
		}
		key = "approaching"
	}
	a.record(key, f.Tool, f.NativeID, f.Limit, f.At)
}

// context records the session's context level once it passes WARN, and
// tells the agent once, on a tool event whose output reaches the model;
// it reports a new CRITICAL level.
func (a *limitAct) context() (critical bool) {
	o, out := a.o, &a.out
	if out.Level.Rank() < distill.ContextWarn.Rank() {
		return false
	}
	if key := "context:" + string(out.Level); !o.Ledger.HasLimit(o.SessionID, key) {
		fresh, err := o.Ledger.RecordLimit(ledger.LimitEvent{SessionID: o.SessionID, Key: key, Project: o.Project.Root, Tool: o.Agent.Name,
			Limit: adapters.Limit{Kind: ContextKind(out.Level), UsedPercent: float64(out.Percent)}, At: o.Project.Now})
		if err != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("record context level: %v", err))
		}
		critical = fresh && out.Level == distill.ContextCritical
	}
	if o.Agent.ToolContextEvent != "" && strings.EqualFold(o.Hook.Event, o.Agent.ToolContextEvent) && !o.Ledger.HasLimit(o.SessionID, toldKey) {
		out.AgentNote = agentNote(o, out.Percent)
	}
	return critical
}

// ContextKind is the limit kind a context level is recorded under.
func ContextKind(l distill.ContextLevel) adapters.LimitKind {
	return adapters.LimitKind("context_" + string(l))
}

// toldKey records that the agent was told its context is filling.
const toldKey = "told:context"

// agentNote is told to the agent once per session when the context passes
// WARN; "" when already told.
func agentNote(o Options, pct int) string {
	fresh, err := o.Ledger.RecordLimit(ledger.LimitEvent{SessionID: o.SessionID, Key: toldKey, Project: o.Project.Root, Tool: o.Agent.Name,
		Limit: adapters.Limit{Kind: "context_told", UsedPercent: float64(pct)}, At: o.Project.Now})
	if err != nil || !fresh {
		return ""
	}
	return fmt.Sprintf("carryover: context %d %% full — finish the current step; carryover has saved the handoff (.carryover/handoff.md).", pct)
}

// Notice is the user's message: "carryover: usage limit reached (resets
// 14:20). Resume prompt ready: .carryover/RESUME.md — paste it into another
// agent, or run: carryover handoff".
func Notice(l *adapters.Limit, resumeReady bool, now time.Time, loc *time.Location) string {
	msg := "carryover: " + l.Phrase()
	if r := l.Resets(now, loc); r != "" {
		msg += " (resets " + r + ")"
	}
	msg += "."
	if resumeReady {
		msg += " Resume prompt ready: .carryover/RESUME.md — paste it into another agent, or run: carryover handoff"
	} else {
		msg += " To continue in another agent, run: carryover handoff"
	}
	return msg
}

// StoppedLine is the line the next session's handoff starts with when the
// project's last session stopped at a limit ("" when it did not, or when
// the session went on after it).
func StoppedLine(l *ledger.Ledger, project string, now time.Time, loc *time.Location) string {
	e, ok := l.StoppedAt(project)
	if !ok {
		return ""
	}
	if s, err := l.SessionIn(e.Tool, e.NativeID, project); err == nil && s.LastActive.After(e.At.Add(2*time.Minute)) {
		return "" // the session carried on after the limit
	}
	if now.Sub(e.At) > 7*24*time.Hour {
		return ""
	}
	name := e.Tool
	if a, ok := adapters.ByName(e.Tool); ok {
		name = a.Display
	}
	line := fmt.Sprintf("Note: the previous %s session stopped at a %s", name, phraseNoun(e.Limit))
	if r := e.Limit.Resets(now, loc); r != "" {
		line += " (it resets " + r + ")"
	}
	return line + "; continue its task from this handoff."
}

func phraseNoun(l adapters.Limit) string {
	switch l.Kind {
	case adapters.LimitRate:
		return "rate limit"
	case adapters.LimitQuota:
		return "quota limit"
	case adapters.LimitOverloaded:
		return "model overload error"
	}
	return "usage limit"
}

// WriteResume builds the resume prompt of a session (the universal target,
// as `carryover handoff` does, without git diffs: the hook's budget has no
// room for git processes) and writes it to RESUME.md.
func WriteResume(l *ledger.Ledger, p *publish.Project, tool, native string, sid int64) error {
	ls, err := l.SessionByID(sid)
	if err != nil {
		return err
	}
	rows, err := l.Rows(sid, 4000)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("the session has no rows yet")
	}
	s := resume.FromRows(rows, resume.Sources{Project: p.Root, Tool: tool, SessionID: native, Ledger: ls, Now: p.Now, Redact: p.Redact})
	res, err := resume.Build(s, resume.Options{Target: resume.DefaultTarget, Mode: p.Mode})
	if err != nil {
		return err
	}
	text := res.Text
	if p.Redact != nil {
		text = p.Redact(text)
	}
	if p.NotProject {
		return nil // no file in the home directory: `carryover handoff` builds it
	}
	// Never through a symlink planted in .carryover (safefile).
	return publish.WriteOwn(p.Root, "RESUME.md", []byte(text))
}

// Critical reports whether a session's context is at CRITICAL (the hook
// then refreshes the handoff even on a tool event).
func Critical(l *ledger.Ledger, sid int64, agent *adapters.Agent, cfg Config) bool {
	lvl, _ := ContextOf(l, sid, agent, cfg)
	return lvl == distill.ContextCritical
}

// ContextOf is session sid's context level and percent ("" when the
// session cannot be read). The hook looks it up once and passes it to Act.
func ContextOf(l *ledger.Ledger, sid int64, agent *adapters.Agent, cfg Config) (distill.ContextLevel, int) {
	s, err := l.SessionByID(sid)
	if err != nil {
		return "", 0
	}
	return Level(s, agent, cfg)
}

// Output renders what a hook says besides an injection: the agent note in
// the agent's envelope for event, the user notice as a systemMessage field
// when the agent shows one (merged into the same JSON object), else on
// stderr. injected is the injection already on stdout (nothing is added to
// a non-empty one but the stderr notice).
func Output(agent *adapters.Agent, event string, o Outcome, injected bool) (stdout []byte, stderr string) {
	var obj map[string]any
	if o.AgentNote != "" && !injected && agent.Envelope != adapters.EnvelopeNone {
		if b, err := adapters.Wrap(agent.Envelope, event, o.AgentNote); err == nil && json.Unmarshal(b, &obj) != nil {
			obj = nil
		}
	}
	if o.Notice != "" {
		if agent.SystemMessage && !injected {
			if obj == nil {
				obj = map[string]any{}
			}
			obj["systemMessage"] = o.Notice
		} else {
			stderr = o.Notice + "\n"
		}
	}
	if obj == nil {
		return nil, stderr
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, o.Notice + "\n"
	}
	return append(b, '\n'), stderr
}
