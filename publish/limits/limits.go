// Package limits decides what the hook does when a session runs into a wall: a rate limit or quota (adapters.Limit
// signals found by the ingest or carried by the hook payload), or a filling context window. It records each event once
// in the ledger, writes .carryover/RESUME.md (the resume prompt `carryover handoff` builds, universal target) and says
// what to tell the user and the agent. It never touches the clipboard.
package limits

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/resume"
	"github.com/carryover/carryover/publish/safefile"
)

// Config is what limits reads of [limits] and [context] (publish/config.Walls owns the keys and defaults): an
// interface, so feature packages do not import each other.
type Config interface {
	AutoResume() bool
	WarnPercent() float64
	Thresholds() distill.Thresholds
}

func ResumePath(project string) string { return filepath.Join(publish.Dir(project), "RESUME.md") }

// Window is the context window a session's usage is measured against: what the agent reported, else the agent's
// descriptor.
func Window(s ledger.Session, agent *adapters.Agent) int64 {
	if s.TokensMax > 0 {
		return s.TokensMax
	}
	if agent != nil {
		return int64(agent.ContextWindow)
	}
	return 0
}

func Level(s ledger.Session, agent *adapters.Agent, cfg Config) (distill.ContextLevel, int) {
	return distill.Level(s.TokensUsed, Window(s, agent), cfg.Thresholds())
}

// Options is one hook's view of a possible wall.
type Options struct {
	Ledger    *ledger.Ledger
	Project   *publish.Project
	Agent     *adapters.Agent
	Class     adapters.Class
	Hook      adapters.Hook
	SessionID int64               // the hook session's ledger id
	Found     []ledger.FoundLimit // the signals the ingest read (any session of the project)
	Config    Config
	Loc       *time.Location // the user's time zone for reset times (nil: time.Local)
	// Level and Percent: the session's context when the caller looked it up (ContextOf); Level "" makes Act look it up.
	Level   distill.ContextLevel
	Percent int
	// Handoff is the project's handoff distilled this event (the hook's one distillation), which RESUME.md is built
	// from.
	Handoff func() (distill.Handoff, error)
}

// Outcome is what the hook should say and did.
type Outcome struct {
	Notice    string // for the user (Claude Code's systemMessage, else stderr)
	AgentNote string // for the agent (a tool event's additionalContext)
	Resume    string // the RESUME.md written ("" none)
	Level     distill.ContextLevel
	Percent   int
	Notes     []string // for the log
}

// Act records the hook's limit signals and context level and decides what to say; the caller has already refreshed the
// handoff.
func Act(o Options) Outcome {
	var out Outcome
	announce := recordLimits(o, &out)
	critical := recordContext(o, &out)
	if announce == nil && !critical {
		return out
	}
	if o.Config.AutoResume() {
		if err := WriteResume(o.Ledger, o.Project, o.Handoff, o.Agent.Name, o.Hook.SessionID, o.SessionID); err != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("write RESUME.md: %v", err))
		} else {
			out.Resume = ResumePath(o.Project.Root)
		}
	}
	if announce != nil {
		out.Notice = Notice(announce, out.Resume != "", o.Project.Now, o.Loc)
	}
	return out
}

// recordLimits records the limits the hook and the ingest found and returns the one to announce: the hook session's own
// new event, the strongest.
func recordLimits(o Options, out *Outcome) (announce *adapters.Limit) {
	now := o.Project.Now
	record := func(key, tool, native string, lim adapters.Limit, at time.Time) {
		if fresh, sid := recordLimit(o, out, key, tool, native, lim, at); fresh && sid == o.SessionID && (announce == nil || (lim.Reached && !announce.Reached)) {
			announce = &lim
		}
	}
	if h := o.Hook.Limit; h != nil {
		record("hook:"+o.Hook.Event+":"+strconv.FormatInt(now.UnixMilli(), 10), "", "", *h, now)
	}
	for _, f := range o.Found {
		key := f.Key
		if !f.Limit.Reached {
			if f.Limit.UsedPercent < o.Config.WarnPercent() {
				continue
			}
			key = "approaching" // once per session
		}
		record(key, f.Tool, f.NativeID, f.Limit, f.At)
	}
	return announce
}

// recordLimit records one limit event of session native of tool (the hook's own when ""), read at at; fresh: it is new,
// in session sid.
func recordLimit(o Options, out *Outcome, key, tool, native string, lim adapters.Limit, at time.Time) (fresh bool, sid int64) {
	tool = cmp.Or(tool, o.Agent.Name)
	sid, ok := sessionOf(o, tool, native)
	if !ok {
		return false, 0
	}
	if at.IsZero() {
		at = o.Project.Now
	}
	fresh, err := recordEvent(o.Ledger, Event{SessionID: sid, Key: key, Project: o.Project.Root, Tool: tool, Limit: lim, At: at})
	if err != nil {
		out.Notes = append(out.Notes, fmt.Sprintf("record limit: %v", err))
	}
	return fresh && err == nil, sid
}

// sessionOf is the ledger id of session native of tool: the hook's own, or another one whose file the catch-up read.
func sessionOf(o Options, tool, native string) (int64, bool) {
	if native == "" || (native == o.Hook.SessionID && tool == o.Agent.Name) {
		return o.SessionID, true
	}
	s, err := o.Ledger.SessionIn(tool, native, o.Project.Root)
	return s.ID, err == nil
}

// recordContext records the session's context level once per level and decides the agent's note; critical: the level
// just reached CRITICAL.
func recordContext(o Options, out *Outcome) (critical bool) {
	out.Level, out.Percent = o.Level, o.Percent
	if out.Level == "" {
		out.Level, out.Percent = ContextOf(o.Ledger, o.SessionID, o.Agent, o.Config)
	}
	if out.Level.Rank() < distill.ContextWarn.Rank() {
		return false
	}
	if key := "context:" + string(out.Level); !hasEvent(o.Ledger, o.SessionID, key) {
		fresh, err := recordEvent(o.Ledger, Event{SessionID: o.SessionID, Key: key, Project: o.Project.Root, Tool: o.Agent.Name,
			Limit: adapters.Limit{Kind: ContextKind(out.Level), UsedPercent: float64(out.Percent)}, At: o.Project.Now})
		if err != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("record context level: %v", err))
		}
		critical = fresh && out.Level == distill.ContextCritical
	}
	// Told once per session past WARN, on a tool event whose output reaches the model.
	if o.Agent.ToolContextEvent != "" && strings.EqualFold(o.Hook.Event, o.Agent.ToolContextEvent) && !hasEvent(o.Ledger, o.SessionID, toldKey) {
		out.AgentNote = agentNote(o, out.Percent)
	}
	return critical
}

// agentNote is the agent's note, "" when already told.
func agentNote(o Options, pct int) string {
	fresh, err := recordEvent(o.Ledger, Event{SessionID: o.SessionID, Key: toldKey, Project: o.Project.Root, Tool: o.Agent.Name,
		Limit: adapters.Limit{Kind: "context_told", UsedPercent: float64(pct)}, At: o.Project.Now})
	if err != nil || !fresh {
		return ""
	}
	return fmt.Sprintf("carryover: context %d %% full — finish the current step; carryover has saved the handoff (.carryover/handoff.md).", pct)
}

// ContextKind is the limit kind a context level is recorded under.
func ContextKind(l distill.ContextLevel) adapters.LimitKind {
	return adapters.LimitKind("context_" + string(l))
}

// toldKey records that the agent was told its context is filling.
const toldKey = "told:context"

// Notice is the user's message: "carryover: usage limit reached (resets 14:20). Resume prompt ready:
// .carryover/RESUME.md — paste it into another agent, or run: carryover handoff".
func Notice(l *adapters.Limit, resumeReady bool, now time.Time, loc *time.Location) string {
	msg := "carryover: " + l.Phrase()
	if r := l.Resets(now, loc); r != "" {
		msg += " (resets " + r + ")"
	}
	if resumeReady {
		return msg + ". Resume prompt ready: .carryover/RESUME.md — paste it into another agent, or run: carryover handoff"
	}
	return msg + ". To continue in another agent, run: carryover handoff"
}

// StoppedLine starts the next session's handoff when the project's last session stopped at a limit in the past 7 days
// ("" when not, or when a session of the project other than current, the one starting — that session or the one the
// user switched to — went on for more than 2 minutes after it: its handoff is that later work's, and a Codex session
// that finished the task is no session that "stopped at a rate limit").
func StoppedLine(l *ledger.Ledger, project string, current int64, now time.Time, loc *time.Location) string {
	e, err := scanEvent(l.QueryRow(reachedEvents+`e.project = ? ORDER BY e.at DESC LIMIT 1`, project))
	if err != nil || now.Sub(e.At) > 7*24*time.Hour {
		return ""
	}
	var later int
	if l.QueryRow(`SELECT COUNT(*) FROM sessions WHERE project = ? AND id != ? AND last_active > ?`,
		project, current, e.At.Add(2*time.Minute).UnixMilli()).Scan(&later) == nil && later > 0 {
		return ""
	}
	name := e.Tool
	if a, ok := adapters.ByName(e.Tool); ok {
		name = a.Display
	}
	noun := map[adapters.LimitKind]string{adapters.LimitRate: "rate limit", adapters.LimitQuota: "quota limit", adapters.LimitOverloaded: "model overload error"}[e.Limit.Kind]
	line := fmt.Sprintf("Note: the previous %s session stopped at a %s", name, cmp.Or(noun, "usage limit"))
	if r := e.Limit.Resets(now, loc); r != "" {
		line += " (it resets " + r + ")"
	}
	return line + "; continue its task from this handoff."
}

// WriteResume builds a session's resume prompt (universal target, as `carryover handoff` does, without git diffs: the
// hook's budget has no room for git processes) from the handoff distilled this event, into RESUME.md.
func WriteResume(l *ledger.Ledger, p *publish.Project, handoff func() (distill.Handoff, error), tool, native string, sid int64) error {
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
	h, err := handoff()
	if err != nil {
		return err
	}
	s := resume.FromRows(rows, h, resume.Sources{Project: p.Root, Tool: tool, SessionID: native, Ledger: ls, Now: p.Now, Redact: p.Redact})
	res, err := resume.Build(s, resume.Options{Target: resume.DefaultTarget, Mode: p.Mode})
	if err != nil || p.NotProject { // no file in the home directory: `carryover handoff` builds it
		return err
	}
	return publish.WriteOwn(p.Root, "RESUME.md", []byte(p.Redacted(res.Text))) // never through a planted symlink
}

// ContextOf is session sid's context level and percent ("" when the session cannot be read). The hook looks it up once
// and passes it to Act.
func ContextOf(l *ledger.Ledger, sid int64, agent *adapters.Agent, cfg Config) (distill.ContextLevel, int) {
	s, err := l.SessionByID(sid)
	if err != nil {
		return "", 0
	}
	return Level(s, agent, cfg)
}

// Output renders what a hook says besides an injection: the agent note in the agent's envelope for event, the user
// notice as a systemMessage field of the same JSON object when the agent shows one, else on stderr. Nothing but the
// stderr notice is added to an injection already on stdout.
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

// Event is a limit (or context level) a session reached: a limit_events row.
type Event struct {
	SessionID int64
	NativeID  string
	// Key identifies the event within its session: the row that carried it, "approaching" for the once-per-session
	// warning, "context:LEVEL".
	Key     string
	Project string
	Tool    string
	Limit   adapters.Limit
	At      time.Time
}

// recordEvent stores e once; false when the session has an event with its key.
func recordEvent(l ledger.Store, e Event) (bool, error) {
	var resets int64
	if !e.Limit.ResetsAt.IsZero() {
		resets = e.Limit.ResetsAt.Unix()
	}
	return ledger.Changed(l, `INSERT INTO limit_events (session_id, key, project, tool, kind, reached, used_percent, window, resets_at, reset_text, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		e.SessionID, e.Key, e.Project, e.Tool, string(e.Limit.Kind), e.Limit.Reached, e.Limit.UsedPercent, e.Limit.Window, resets, e.Limit.ResetText, e.At.UnixMilli())
}

func hasEvent(l ledger.Store, sessionID int64, key string) bool {
	return ledger.Has(l, `SELECT COUNT(*) FROM limit_events WHERE session_id = ? AND key = ?`, sessionID, key)
}

// reachedEvents are the limits reached (not warnings, not context levels) in where, newest first.
const reachedEvents = `SELECT e.session_id, s.native_id, e.key, e.project, e.tool, e.kind, e.used_percent, e.window, e.resets_at, e.reset_text, e.at
	FROM limit_events e JOIN sessions s ON s.id = e.session_id WHERE e.reached = 1 AND e.kind NOT LIKE 'context%' AND `

func scanEvent(sc ledger.Scanner) (Event, error) {
	var e Event
	var kind string
	var resets, at int64
	err := sc.Scan(&e.SessionID, &e.NativeID, &e.Key, &e.Project, &e.Tool, &kind, &e.Limit.UsedPercent, &e.Limit.Window, &resets, &e.Limit.ResetText, &at)
	e.Limit.Kind, e.Limit.Reached = adapters.LimitKind(kind), true
	if resets > 0 {
		e.Limit.ResetsAt = time.Unix(resets, 0).UTC()
	}
	e.At = time.UnixMilli(at)
	return e, err
}

// LastLimits is the newest limit reached per agent in project ("" every project), newest first.
func LastLimits(l ledger.Store, project string) ([]Event, error) {
	where, args := ledger.ForProject("e.project", project)
	evs, err := ledger.All(l, scanEvent, reachedEvents+where+` ORDER BY e.at DESC LIMIT 200`, args...)
	seen := map[string]bool{}
	var out []Event
	for _, e := range evs {
		if !seen[e.Tool] {
			seen[e.Tool] = true
			out = append(out, e)
		}
	}
	return out, err
}

// `carryover run` and the hooks of the agent it started talk through files under $CARRYOVER_HOME/run/<run id>/, never a
// daemon: <gen>.session holds the session id the generation's first SessionStart named, <gen>.critical a Signal that
// its context reached CRITICAL. The wrapper exports RunEnv = "<run id>.<gen>" and RunPIDEnv = its pid to the agent,
// whose hooks inherit them; it acts on a signal only when run id, generation, registered session and pid all match, so
// a stale file, another session's signal or a copied environment never ends anything.
const (
	RunEnv    = "CARRYOVER_RUN_ID"
	RunPIDEnv = "CARRYOVER_RUN_PID"
)

// Signal is what a hook writes when its session reaches CRITICAL under `carryover run`.
type Signal struct {
	Run     string `json:"run"` // "<run id>.<gen>"
	PID     int    `json:"pid"` // the wrapper's pid (RunPIDEnv)
	Tool    string `json:"tool"`
	Session string `json:"session"`
	Level   string `json:"level"`
	Percent int    `json:"percent"`
	At      time.Time
}

func RunDir(home, runID string) string { return filepath.Join(home, "run", runID) }

// splitRun splits "<id>.<gen>"; the id is hex, so no path can be smuggled.
func splitRun(v string) (id string, gen int, ok bool) {
	id, g, found := strings.Cut(v, ".")
	n, err := strconv.Atoi(g)
	if !found || len(id) < 8 || len(id) > 64 || strings.Trim(id, "0123456789abcdef") != "" || err != nil || n < 0 || n > 1000 {
		return "", 0, false
	}
	return id, n, true
}

// RunHook is the hook's side under `carryover run` (run = $CARRYOVER_RUN_ID): it registers the generation's session at
// its first start and writes the CRITICAL signal for it; the note is for the log.
func RunHook(home, run, pid, tool, session string, start bool, lvl distill.ContextLevel, pct int, now time.Time) (string, error) {
	if run == "" {
		return "", nil
	}
	id, gen, ok := splitRun(run)
	if !ok {
		return "", fmt.Errorf("%s=%q is not carryover's; ignored", RunEnv, run)
	}
	if reg := runFile(home, id, gen, ".session"); start {
		if _, err := os.Lstat(reg); errors.Is(err, os.ErrNotExist) {
			return writeRun(reg, "run "+run+": session registered", []byte(session+"\n"))
		}
	}
	if lvl != distill.ContextCritical {
		return "", nil
	}
	path := runFile(home, id, gen, ".critical")
	if _, err := os.Lstat(path); err == nil {
		return "", nil // signalled already
	}
	p, _ := strconv.Atoi(pid)
	b, _ := json.Marshal(Signal{Run: run, PID: p, Tool: tool, Session: session, Level: string(lvl), Percent: pct, At: now.UTC()})
	return writeRun(path, "run "+run+": CRITICAL signalled to carryover run", b)
}

// runFile is generation gen's file with extension ext in run id's directory.
func runFile(home, id string, gen int, ext string) string {
	return filepath.Join(RunDir(home, id), strconv.Itoa(gen)+ext)
}

// writeRun writes a run file, creating the run's directory, and returns note for the log.
func writeRun(path, note string, data []byte) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return note, publish.WriteAtomic(path, data)
}

// ReadSignal is the wrapper's side: the verified CRITICAL signal of generation gen of run id for the wrapper pid and
// agent tool; ok false when there is none or it does not verify (why says why).
func ReadSignal(home, id string, gen, pid int, tool string) (sig Signal, ok bool, why string) {
	b, err := safefile.ReadFileNoFollow(runFile(home, id, gen, ".critical"), 4096)
	if err != nil {
		return sig, false, ""
	}
	if json.Unmarshal(b, &sig) != nil {
		return sig, false, "unreadable signal"
	}
	reg, err := safefile.ReadFileNoFollow(runFile(home, id, gen, ".session"), 4096)
	session := strings.TrimSpace(string(reg))
	switch {
	case sig.Run != id+"."+strconv.Itoa(gen):
		return sig, false, "signal for another run"
	case sig.PID != pid:
		return sig, false, "signal from another carryover run process"
	case err != nil || session == "":
		return sig, false, "no session registered for this run"
	case sig.Session != session:
		return sig, false, "signal for another session (" + publish.ShortID(sig.Session) + ", this run's is " + publish.ShortID(session) + ")"
	case tool != "" && sig.Tool != tool:
		return sig, false, "signal from another agent"
	}
	return sig, true, ""
}

// ClearSignal removes a generation's signal (one that did not verify too, so it is not read again).
func ClearSignal(home, id string, gen int) {
	_ = os.Remove(runFile(home, id, gen, ".critical"))
}
