package cmd

// `carryover doctor` runs every installed hook stub as its agent would (through the shell, a synthetic payload, scratch
// project and home), checks exit code, time against the hook timeout and the start envelope; adds the last delivery.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/service"
	"github.com/carryover/carryover/specs"
	"github.com/carryover/carryover/specs/hookconf"
)

func doctorCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:   "doctor",
		Usage:  "run each installed hook stub as its agent would and report, per agent, what works and how to fix what does not",
		Flags:  []cli.Flag{jsonFlag("print JSON")},
		Action: func(c *cli.Context) error { return runDoctor(e, c.Bool("json")) },
	}
}

// DoctorReport is one agent's line: Summary what was checked, Problem what failed, Fix what to do, Ran stubs run.
type DoctorReport struct {
	Tool         string        `json:"tool"`
	Display      string        `json:"display"`
	OK           bool          `json:"ok"`
	Summary      string        `json:"summary"`
	Problem      string        `json:"problem,omitempty"`
	Fix          string        `json:"fix,omitempty"`
	Ran          int           `json:"ran"`
	Slowest      time.Duration `json:"slowest_ns"`
	LastDelivery string        `json:"last_delivery,omitempty"`
}

// doctorMarker is in the scratch handoff; the start stub's injection must carry it back.
const doctorMarker = "carryover doctor check"

func runDoctor(e *Env, asJSON bool) error {
	tab, err := specs.Load()
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	cfg, _ := LoadConfig(e, "")
	reps, idle := doctorAgents(e, tab, cfg)
	failed, wired := countProblems(reps, cfg)
	err = output(e, asJSON, struct {
		Agents     []DoctorReport `json:"agents"`
		HooksWired int            `json:"hooks_wired"`
		NotSetUp   []string       `json:"not_set_up"`
		Problems   int            `json:"problems"`
	}{nonNil(reps), wired, nonNil(idle), failed}, func() { printDoctor(e, reps, idle, wired) })
	if err == nil && failed > 0 {
		return exitf(ExitError, "%d problem(s); see the fixes above", failed)
	}
	return err
}

// doctorAgents checks every agent; idle are those neither detected nor chosen, with nothing to check. The delivery
// receipts are read without creating a ledger.
func doctorAgents(e *Env, tab *specs.Table, cfg Config) (reps []DoctorReport, idle []string) {
	receipts := map[string]service.Receipt{}
	if st, err := service.OpenStore(e.service()); err == nil {
		receipts = st.LastReceipts()
		st.Close()
	}
	for _, a := range agentStatus(e) {
		tl, _ := tab.Tool(a.Tool)
		r := doctorAgent(e, tab, tl, a)
		if r.Ran == 0 && r.OK && !a.Detected() && !slices.Contains(cfg.Tools, a.Tool) {
			idle = append(idle, a.Display)
			continue
		}
		if d, ok := receipts[a.Tool]; ok {
			r.LastDelivery = fmt.Sprintf("last delivery %s (session %s, via %s)", publish.Ago(e.Now(), d.At), publish.ShortID(d.Session), d.Via)
		} else if r.Ran > 0 {
			r.LastDelivery = "no delivery recorded yet"
		}
		reps = append(reps, r)
	}
	return reps, idle
}

// countProblems marks agents chosen at install but not wired (not detected then, or removed) and counts the problems
// and the hooks run. No hook wired at all is a problem too: no session starts with a handoff.
func countProblems(reps []DoctorReport, cfg Config) (failed, wired int) {
	for i, r := range reps {
		if r.OK && slices.Contains(cfg.Tools, r.Tool) && strings.HasPrefix(r.Summary, "no carryover hooks") { // no stubs, not flagged
			reps[i].OK, reps[i].Fix = false, "run `carryover install --tools "+r.Tool+"`"
		}
		if !reps[i].OK {
			failed++
		}
		wired += r.Ran
	}
	if wired == 0 {
		failed++
	}
	return failed, wired
}

// printDoctor prints one line per agent: mark, summary, problem, last delivery and fix.
func printDoctor(e *Env, reps []DoctorReport, idle []string, wired int) {
	if wired == 0 {
		fmt.Fprintln(e.Stdout, checkMark(e, false)+" no carryover hooks are wired for any agent, so no session receives a handoff — fix: run `carryover install`")
	}
	for _, r := range reps {
		line := fmt.Sprintf("%s %s: %s", checkMark(e, r.OK), r.Display, r.Summary)
		for _, s := range []string{r.Problem, r.LastDelivery} {
			if s != "" {
				line += "; " + s
			}
		}
		if r.Fix != "" {
			line += " — fix: " + r.Fix
		}
		fmt.Fprintln(e.Stdout, line)
	}
	if len(idle) > 0 {
		fmt.Fprintf(e.Stdout, "  not set up (not detected, no hooks): %s\n", strings.Join(idle, ", "))
	}
}

// doctorAgent checks one agent's installed stubs.
func doctorAgent(e *Env, tab *specs.Table, tl specs.Tool, a AgentStatus) DoctorReport {
	r := DoctorReport{Tool: a.Tool, Display: a.Display, OK: true}
	tg := installTarget(e, tl)
	c := a.hookCapability(tab)
	if tg.Path == "" || len(c.Hooks()) == 0 {
		r.Summary = "no hooks for this agent; it reads .carryover/handoff.md through the pointer block"
		return r
	}
	stubs, err := hookconf.Stubs(tg, hookconf.OSFS{})
	switch {
	case err != nil: // an agent runs none of the hooks of a config it cannot parse
		r.OK, r.Summary = false, "hooks not run"
		r.Problem = fmt.Sprintf("%s cannot be parsed (%v), so %s runs none of its hooks", tg.Path, err, a.Display)
		r.Fix = "repair the file's syntax" + backupNote(tg.Path) + ", then run `carryover install`"
		return r
	case len(stubs) == 0: // a problem for a detected agent, not for one not installed
		r.Summary = "no carryover hooks in " + tg.Path
		if a.Detected() && a.Capability.Tool == "" && a.Problem != "" {
			r.OK, r.Problem = false, a.Problem
		} else if a.Detected() {
			r.OK, r.Fix = false, "run `carryover install --tools "+a.Tool+"`"
		}
		return r
	}
	project, home, cleanup, err := doctorScratch(e)
	if err != nil {
		r.OK, r.Summary, r.Problem = false, "hooks not run", err.Error()
		return r
	}
	defer cleanup()
	var st stubChecks
	timeouts := map[string]int{} // seconds, by native event
	for _, h := range c.Hooks() {
		timeouts[h.Native] = h.Timeout
	}
	for _, s := range stubs {
		st.run(e, &r, tl, c, a.Display, s, project, home, timeouts[s.Event])
	}
	return st.report(r, tg, a)
}

func backupNote(path string) string {
	if publish.Exists(path + ".carryover.bak") {
		return " (the copy from before carryover's first change is " + path + ".carryover.bak)"
	}
	return ""
}

// doctorScratch makes a scratch project holding a published handoff and a scratch home for the stubs to run against.
// The start stub injects only a handoff carryover published (issue 10): it is recorded as such.
func doctorScratch(e *Env) (project, home string, cleanup func(), err error) {
	scratch, err := os.MkdirTemp("", "carryover-doctor-")
	if err != nil {
		return "", "", nil, err
	}
	project, home = filepath.Join(scratch, "project"), filepath.Join(scratch, "home")
	os.MkdirAll(filepath.Join(project, ".carryover"), 0o700)
	handoff := publish.HeaderPrefix + e.Now().UTC().Format(time.RFC3339) + "\n\n## Task\n" + doctorMarker + "\n"
	os.WriteFile(publish.HandoffPath(project), []byte(handoff), 0o600)
	if real, err := filepath.EvalSymlinks(project); err == nil {
		publish.RecordPublished(home, real, publish.Digest([]byte(handoff)))
	}
	return project, home, func() { os.RemoveAll(scratch) }, nil
}

// stubChecks gathers what running an agent's stubs found. failMsgs are the distinct run failures, failEvents their
// events: the same failure on every stub is said once, with its events.
type stubChecks struct {
	problems, failMsgs []string
	failEvents         [][]string
	checkedStart       bool
}

// run runs one stub within its timeout (60 s, the agents' usual default, if none) and checks a start stub's injection.
func (st *stubChecks) run(e *Env, r *DoctorReport, tl specs.Tool, c specs.Capability, display string, s hookconf.Stub, project, home string, timeout int) {
	limit := time.Duration(cmp.Or(max(timeout, 0), 60)) * time.Second
	out, errOut, took, runErr := runStub(e, s, tl.Name, project, home, limit)
	r.Ran++
	r.Slowest = max(r.Slowest, took)
	switch {
	case runErr != nil:
		msg := fmt.Sprintf("%v%s", runErr, firstLine(errOut))
		if i := slices.Index(st.failMsgs, msg); i >= 0 {
			st.failEvents[i] = append(st.failEvents[i], s.Event)
		} else {
			st.failMsgs, st.failEvents = append(st.failMsgs, msg), append(st.failEvents, []string{s.Event})
		}
		r.Fix = stubFix(s, e.Executable)
		return
	case took > limit:
		st.problems = append(st.problems, fmt.Sprintf("%s took %s, over %s's %s timeout", s.Event, took.Round(time.Millisecond), display, limit))
	}
	if agent, ok := adapters.ByName(tl.Name); ok && agent.Class(s.Event) == adapters.ClassStart {
		st.checkStart(r, agent, c, display, s.Event, out)
	}
}

// checkStart checks that a start stub's output parses as the agent's envelope and carries the scratch handoff.
func (st *stubChecks) checkStart(r *DoctorReport, agent *adapters.Agent, c specs.Capability, display, event string, out []byte) {
	env := cmp.Or(c.Envelope, agent.Envelope)
	text, err := adapters.Unwrap(env, event, out)
	switch {
	case err != nil:
		st.problems = append(st.problems, fmt.Sprintf("%s output does not parse as %s's %s envelope: %v", event, display, env, err))
		r.Fix = "run `carryover refresh` (the stubs may predate this agent version)"
	case env != adapters.EnvelopeNone && !strings.Contains(text, doctorMarker):
		st.problems = append(st.problems, fmt.Sprintf("%s printed no handoff", event))
	default:
		st.checkedStart = true
	}
}

func (st *stubChecks) report(r DoctorReport, tg hookconf.Target, a AgentStatus) DoctorReport {
	problems := st.problems
	for i, m := range st.failMsgs {
		problems = append(problems, strings.Join(st.failEvents[i], ", ")+": "+m)
	}
	r.Summary = fmt.Sprintf("%d hooks ran (slowest %s)", r.Ran, r.Slowest.Round(time.Millisecond))
	if st.checkedStart {
		r.Summary += ", start injection parses"
	}
	// A whole hook file's drift (its mode, the carryover it names) is often why it failed: say it even then.
	if whole := tg.Layout.Whole(); a.Hooks.State == hookconf.StateDrifted && (len(st.failMsgs) == 0 || whole) {
		problems = append(problems, a.Hooks.Detail)
		if r.Fix == "" || whole && strings.HasPrefix(r.Fix, "run the stub's command by hand") {
			r.Fix = "run `carryover refresh`"
		}
	}
	// A setting of the agent's own that turns its hooks off (Gemini CLI's hooksConfig.enabled = false): every stub
	// above ran, but the agent will run none of them.
	if len(a.Hooks.Off) > 0 {
		problems = append(problems, a.Hooks.Off...)
		r.Fix = cmp.Or(r.Fix, "change that setting in "+a.Hooks.Path)
	}
	if len(problems) > 0 {
		r.OK = false
		r.Problem = strings.Join(problems, "; ")
		r.Fix = cmp.Or(r.Fix, "see $CARRYOVER_HOME/carryover.log, then run `carryover refresh`")
	}
	return r
}

// runStub runs one stub's command line through the shell, as the agents do, with a payload carrying every agent's field
// names for the session, the project and the event; it gives up 10 s past limit.
func runStub(e *Env, s hookconf.Stub, tool, project, home string, limit time.Duration) (stdout, stderr []byte, took time.Duration, err error) {
	id := "doctor-" + tool
	payload, _ := json.Marshal(map[string]any{
		"session_id": id, "sessionId": id, "conversation_id": id, "trajectory_id": id, "taskId": id,
		"cwd": project, "workspace_roots": []string{project}, "workspaceRoots": []string{project},
		"transcript_path": filepath.Join(project, "doctor-transcript.jsonl"),
		"hook_event_name": s.Event, "hookEventName": s.Event, "source": "startup",
	})
	ctx, cancel := context.WithTimeout(context.Background(), limit+10*time.Second)
	defer cancel()
	shell, flag := "sh", "-c"
	if runtime.GOOS == "windows" {
		shell, flag = "cmd", "/C"
	}
	bin := lookPath(e, shell)
	if bin == "" {
		return nil, nil, 0, fmt.Errorf("no %s on PATH", shell)
	}
	c := exec.CommandContext(ctx, bin, flag, s.Command)
	c.Dir = project
	c.Env = append(slices.Clone(e.Environ), "PATH="+absPATH(e), "HOME="+e.UserHome(), "CARRYOVER_HOME="+home)
	for _, a := range adapters.All { // as the agents set it for their hooks
		if a.ProjectEnv != "" {
			c.Env = append(c.Env, a.ProjectEnv+"="+project)
		}
	}
	var out, errb bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr, c.WaitDelay = bytes.NewReader(payload), &out, &errb, time.Second
	start := time.Now()
	err = c.Run()
	took = time.Since(start)
	var ee *exec.ExitError
	if ctx.Err() != nil {
		err = fmt.Errorf("no exit within %s", limit+10*time.Second)
	} else if errors.As(err, &ee) {
		err = fmt.Errorf("exit %d", ee.ExitCode())
	}
	return out.Bytes(), errb.Bytes(), took, err
}

// stubFix says what to do for a failed stub: the carryover it names (first word, unquoted) is gone, or run it by hand.
func stubFix(s hookconf.Stub, exe string) string {
	bin, _, _ := strings.Cut(strings.TrimSpace(s.Command), " ")
	if cmd := strings.TrimSpace(s.Command); cmd != "" && (cmd[0] == '"' || cmd[0] == '\'') {
		if i := strings.IndexByte(cmd[1:], cmd[0]); i >= 0 {
			bin = cmd[1 : i+1]
		}
	}
	if bin != "" && !publish.Exists(bin) {
		return fmt.Sprintf("the stub runs %s, which does not exist; run `carryover install` with the carryover you use (%s)", bin, exe)
	}
	return "run the stub's command by hand to see why: " + s.Command
}

// firstLine is " (the first line of b, at most 160 bytes)", or "".
func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if s == "" {
		return ""
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return " (" + s + ")"
}
