package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/lifecycle"
	"github.com/carryover/carryover/publish/service"
)

func statusCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show agents, hooks, the ledger, each project's handoff and who received it (read-only)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"},
			&cli.BoolFlag{Name: "space", Usage: "the ledger's size per table and index too (reads the whole ledger)"}},
		Action: func(c *cli.Context) error {
			st := collectStatus(e, c.Bool("space"))
			if c.Bool("json") {
				return printJSON(e.Stdout, st)
			}
			printStatus(plainEnv(e), st)
			return nil
		},
	}
}

// StatusReport is `carryover status --json`.
type StatusReport struct {
	Home     string          `json:"home"`
	Agents   []AgentReport   `json:"agents"`
	Ledger   LedgerReport    `json:"ledger"`
	Projects []ProjectReport `json:"projects"`
	Walls    WallsReport     `json:"limits"`
	Guest    GuestReport     `json:"in_projects"`
	Problems []string        `json:"problems,omitempty"`
	Ignored  []string        `json:"config_ignored,omitempty"` // what the project config asked for and the policy ignores
	Config   []string        `json:"config_warnings,omitempty"`
}

// GuestReport is what carryover writes in projects and what the user
// told it to leave alone or forget.
type GuestReport struct {
	Pointer   string   `json:"pointer"`
	Ignore    []string `json:"ignore"`
	Forgotten int      `json:"forgotten_handoffs"`
}

// AgentReport is one agent's line in status.
type AgentReport struct {
	Tool       string   `json:"tool"`
	Display    string   `json:"display"`
	Detected   bool     `json:"detected"`
	Binary     string   `json:"binary,omitempty"`
	Version    string   `json:"version,omitempty"`
	SpecRow    string   `json:"spec_row,omitempty"`
	Fallback   bool     `json:"fallback,omitempty"`
	Warning    string   `json:"warning,omitempty"`
	ConfigPath string   `json:"config_path,omitempty"`
	Hooks      string   `json:"hooks"`
	HookDetail string   `json:"hook_detail,omitempty"`
	Events     []string `json:"events,omitempty"`
	Problem    string   `json:"problem,omitempty"`
	// Restore: how the handoff reaches an agent that cannot be told at
	// session start. Read: its recent sessions (issue 12: unreadable is
	// not empty; drift names a newer format).
	Restore string           `json:"restore,omitempty"`
	Read    *adapters.Survey `json:"read,omitempty"`
}

// LedgerReport describes the ledger file.
type LedgerReport struct {
	Path     string         `json:"path"`
	Exists   bool           `json:"exists"`
	Bytes    int64          `json:"bytes"`
	Sessions int            `json:"sessions"`
	Rows     int            `json:"rows"`
	ByTool   map[string]int `json:"sessions_by_tool,omitempty"`
	Space    *service.Space `json:"space,omitempty"` // per project; per table with --space
}

// ProjectReport is a project's current handoff and its delivery receipts.
type ProjectReport = service.ProjectStatus

// collectStatus is status's report; tables adds the ledger's size per
// table and index (dbstat reads every page; per project is cheap at any
// size). Status never creates a ledger.
func collectStatus(e *Env, tables bool) (st StatusReport) {
	st = StatusReport{Home: e.Home(), Walls: wallsConfig(e)}
	cwdProject, _ := currentProject(e, "")
	defer func() { // the config warnings of the current project and every project reported
		ps := []string{cwdProject}
		for _, p := range st.Projects {
			ps = append(ps, p.Project)
		}
		st.Config = config.Warnings(e.ConfigPath(), e.UserHome(), slices.DeleteFunc(ps, func(p string) bool { return p == "" }))
	}()
	gcfg, _ := LoadConfig(e, cwdProject)
	st.Guest = GuestReport{Pointer: gcfg.PointerMode(), Ignore: append([]string{}, gcfg.Ignore...)}
	if cwdProject != "" {
		st.Ignored = gcfg.Ignored
	}
	st.Agents = agentReports(e, st.Guest.Pointer)
	path := filepath.Join(e.Home(), service.LedgerFile)
	st.Ledger.Path = path
	if fi, err := os.Stat(path); err == nil {
		st.Ledger.Exists, st.Ledger.Bytes = true, fi.Size()
	}
	if wal, err := os.Stat(path + "-wal"); err == nil && st.Ledger.Exists {
		st.Ledger.Bytes += wal.Size()
	}
	store, err := service.OpenStore(e.service())
	if err != nil {
		st.Problems = append(st.Problems, err.Error())
		return st
	}
	defer store.Close()
	c := store.Stats()
	st.Guest.Forgotten = c.Forgotten
	st.Ledger.Sessions, st.Ledger.Rows, st.Ledger.ByTool = c.Sessions, c.Rows, c.ByTool
	if st.Projects, err = store.Projects(cwdProject); err != nil {
		st.Problems = append(st.Problems, err.Error())
	}
	st.Walls.Last = store.LastLimits()
	if st.Ledger.Exists {
		if st.Ledger.Space, err = store.Space(tables); err != nil {
			st.Problems = append(st.Problems, "ledger space: "+err.Error())
		}
	}
	return st
}

// agentReports is status's line per agent; pointer is the guest mode.
func agentReports(e *Env, pointer string) (out []AgentReport) {
	for _, a := range agentStatus(e) {
		r := AgentReport{Tool: a.Tool, Display: a.Display, Detected: a.Detected(), Binary: a.Binary, Version: a.Version,
			SpecRow: a.Capability.Row, Fallback: a.Capability.Fallback, Warning: a.Capability.Warning,
			ConfigPath: a.Hooks.Path, Hooks: string(a.Hooks.State), HookDetail: a.Hooks.Detail, Events: a.Hooks.Hooks, Problem: a.Problem}
		if a.Detected() && a.Capability.Tool != "" && !a.Capability.StartInjection {
			r.Restore = restoreLine(a.Display, pointer)
		}
		if sv := adapters.SurveyRecent(a.Tool, adapterEnv(e), 5); sv.Sessions+sv.Unread > 0 {
			r.Read = &sv
		}
		out = append(out, r)
	}
	return out
}

func printStatus(e *Env, st StatusReport) {
	w := e.Stdout
	fmt.Fprintf(w, "carryover home: %s\n\nAgents\n", st.Home)
	for _, a := range st.Agents {
		printAgentStatus(w, a)
	}
	printLedger(e, st.Ledger)
	printGuest(w, st.Guest)
	if len(st.Projects) > 0 {
		fmt.Fprintln(w, "\nProjects (current handoff → who received it)")
	}
	for _, p := range st.Projects {
		printProjectStatus(e, p)
	}
	printWalls(e, st)
	for _, p := range st.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	for _, s := range st.Ignored {
		fmt.Fprintf(w, "config: ignored %s\n", s)
	}
	printConfigWarnings(w, st.Config)
}

// printAgentStatus prints an agent's line, its config and notes; an agent
// neither detected nor wired gets one line.
func printAgentStatus(w io.Writer, a AgentReport) {
	mark := "✗"
	ver := "not detected"
	if a.Detected {
		mark, ver = "✓", a.Version
	}
	if !a.Detected && (a.Hooks == "missing" || a.Hooks == "no hooks") {
		fmt.Fprintf(w, "  %s %-22s not detected\n", mark, a.Display)
		printSurvey(w, a.Read)
		return
	}
	fmt.Fprintf(w, "  %s %-22s %-10s hooks: %s", mark, a.Display, ver, a.Hooks)
	if a.SpecRow != "" {
		fmt.Fprintf(w, "  (spec %s)", a.SpecRow)
	}
	fmt.Fprintln(w)
	if a.ConfigPath != "" {
		fmt.Fprintf(w, "      config: %s\n", a.ConfigPath)
	}
	printLines(w, "      ", a.HookDetail, a.Warning, a.Problem, a.Restore)
	printSurvey(w, a.Read)
}

func printLedger(e *Env, l LedgerReport) {
	w := e.Stdout
	fmt.Fprintf(w, "\nLedger  %s\n", l.Path)
	if !l.Exists {
		fmt.Fprintln(w, "  no ledger yet: nothing has been captured (install hooks with `carryover install`, or run `carryover handoff`)")
		return
	}
	var parts []string
	for t, n := range l.ByTool {
		parts = append(parts, fmt.Sprintf("%s %d", t, n))
	}
	sort.Strings(parts)
	fmt.Fprintf(w, "  %s, %d sessions (%s), %d rows\n", humanBytes(l.Bytes), l.Sessions, strings.Join(parts, ", "), l.Rows)
	printSpace(e, l.Space)
}

func printProjectStatus(e *Env, p ProjectReport) {
	w := e.Stdout
	if p.Header == "" {
		fmt.Fprintf(w, "  %s\n    %s\n", p.Project, p.NotInjected)
		return
	}
	fmt.Fprintf(w, "  %s\n    %s (%s)\n", p.Project, strings.TrimPrefix(p.Header, "# "), publish.Ago(e.Now(), p.Written))
	printLines(w, "    ", p.Quality, p.NotInjected)
	printLifecycle(e, p.Lifecycle)
	if p.Lifecycle != nil && p.Lifecycle.Status == lifecycle.StatusCleared {
		return
	}
	if len(p.Receipts) == 0 {
		fmt.Fprintln(w, "    not delivered to any session yet")
	}
	for _, r := range p.Receipts {
		which := "an earlier handoff"
		if r.Current {
			which = "this handoff"
		}
		fmt.Fprintf(w, "    → %s session %s received %s (%s, %s)\n", r.Tool, publish.ShortID(r.Session), which, r.Via, publish.Ago(e.Now(), r.At))
	}
	if p.Context != "" {
		fmt.Fprintf(w, "    context of its session: %s\n", p.Context)
	}
}

// printLines prints each of lines that is not empty, indented.
func printLines(w io.Writer, indent string, lines ...string) {
	for _, s := range lines {
		if s != "" {
			fmt.Fprintf(w, "%s%s\n", indent, s)
		}
	}
}

// printSurvey prints what reading an agent's recent sessions found, and
// one warning line per transcript written by a newer agent than known.
func printSurvey(w io.Writer, sv *adapters.Survey) {
	if sv == nil {
		return
	}
	fmt.Fprintf(w, "      %s\n", sv)
	seen := map[string]bool{}
	for _, d := range sv.Drift {
		if !seen[d] {
			seen[d] = true
			fmt.Fprintf(w, "      warning: %s\n", d)
		}
	}
}

func humanBytes(n int64) string {
	for i, unit := range []string{"GiB", "MiB", "KiB"} {
		if d := int64(1) << (30 - 10*i); n >= d {
			return fmt.Sprintf("%.1f %s", float64(n)/float64(d), unit)
		}
	}
	return fmt.Sprintf("%d B", n)
}

func printGuest(w io.Writer, g GuestReport) {
	fmt.Fprintln(w, "\nIn projects")
	fmt.Fprintln(w, "  handoff: <project>/.carryover/ (git-ignored by its own .gitignore); the home directory and above: the ledger only")
	when := map[string]string{publish.PointerAuto: "only where an agent needs it (no working start injection)",
		publish.PointerAlways: "in every project", publish.PointerNever: "never"}[g.Pointer]
	fmt.Fprintf(w, "  pointer block in AGENTS.md: %s (pointer = %q; `carryover config set pointer never` turns it off)\n", when, g.Pointer)
	if len(g.Ignore) == 0 {
		fmt.Fprintln(w, "  ignored projects: none (`carryover ignore DIR` leaves one alone)")
	} else {
		fmt.Fprintf(w, "  ignored projects: %s (`carryover ignore --remove DIR` undoes one)\n", strings.Join(g.Ignore, ", "))
	}
	if g.Forgotten > 0 {
		fmt.Fprintf(w, "  forgotten sessions: %d handoff record(s) say \"forgotten\" (`carryover forget SESSION`)\n", g.Forgotten)
	}
}

// restoreLine says how the handoff reaches an agent carryover cannot tell
// at session start, under pointer mode mode.
func restoreLine(display, mode string) string {
	if mode == publish.PointerNever {
		return "restore: " + display + " cannot be told at session start and pointer = \"never\", so it receives no handoff; `carryover config set pointer auto` gives it the pointer block in AGENTS.md"
	}
	return "restore: " + display + " cannot be told at session start; the handoff reaches it through the pointer block in AGENTS.md (pointer = \"" + mode + "\")"
}

// spaceProjects is how many (of the biggest) projects status names.
const spaceProjects = 5

func printSpace(e *Env, sp *service.Space) {
	if sp == nil {
		return
	}
	w := e.Stdout
	var rows int64
	for _, p := range sp.Projects {
		rows += p.Rows
	}
	used := sp.FileBytes - sp.FreeBytes
	for i, p := range sp.Projects {
		if i == spaceProjects {
			fmt.Fprintf(w, "    … %d more projects\n", len(sp.Projects)-i)
			break
		}
		share := int64(0)
		if rows > 0 {
			share = used * p.Rows / rows
		}
		fmt.Fprintf(w, "    ~%-9s %s: %d sessions, %d rows, last active %s\n", humanBytes(share), p.Project, p.Sessions, p.Rows, publish.Ago(e.Now(), p.LastActive))
	}
	for _, t := range sp.Tables {
		fmt.Fprintf(w, "    %-9s %s\n", humanBytes(t.Bytes), t.Name)
	}
	if sp.TablesNote != "" {
		fmt.Fprintf(w, "    %s\n", sp.TablesNote)
	}
	if sp.FreeBytes > 0 {
		hint := "`carryover gc` gives it back"
		if !sp.AutoVacuum {
			hint = "reused by new rows; the ledger predates auto-vacuum: `carryover gc --vacuum` once gives it back"
		}
		fmt.Fprintf(w, "    %s free inside the file (%s)\n", humanBytes(sp.FreeBytes), hint)
	}
	fmt.Fprintln(w, "    `carryover gc --older-than 180d` removes old sessions' rows (never handoffs or decisions)")
}

// WallsReport is the [limits]/[context] configuration and the last limit
// each agent hit.
type WallsReport struct {
	AutoResume        bool                `json:"auto_resume"`
	WarnPercent       float64             `json:"warn_percent"`
	MaxRestarts       int                 `json:"max_restarts"`
	RestartAtCritical bool                `json:"restart_at_critical"`
	Thresholds        [3]int              `json:"context_thresholds"` // early warn, warn, critical (%)
	Problems          []string            `json:"problems,omitempty"`
	Last              []service.LastLimit `json:"last,omitempty"`
}

func wallsConfig(e *Env) WallsReport {
	cfg, _ := LoadConfig(e, "")
	w := cfg.Walls()
	t := w.Thresholds()
	return WallsReport{AutoResume: w.AutoResume(), WarnPercent: w.WarnPercent(), MaxRestarts: w.MaxRestarts(),
		RestartAtCritical: w.RestartAtCritical(), Thresholds: [3]int{t.EarlyWarn, t.Warn, t.Critical}, Problems: w.Problems()}
}

func printWalls(e *Env, st StatusReport) {
	w, c := e.Stdout, st.Walls
	auto := "on"
	if !c.AutoResume {
		auto = "off"
	}
	fmt.Fprintf(w, "\nLimits  RESUME.md on a limit: %s, ahead of time from %.0f %% used; context levels %d/%d/%d %%; carryover run restarts ≤ %d\n",
		auto, c.WarnPercent, c.Thresholds[0], c.Thresholds[1], c.Thresholds[2], c.MaxRestarts)
	for _, p := range c.Problems {
		fmt.Fprintf(w, "  config: %s\n", p)
	}
	for _, l := range c.Last {
		name := l.Tool
		if a, ok := adapters.ByName(l.Tool); ok {
			name = a.Display
		}
		line := fmt.Sprintf("  last limit of %s: %s %s", name, strings.ReplaceAll(l.Kind, "_", " "), publish.Ago(e.Now(), l.At))
		if l.Resets != "" {
			line += ", resets " + l.Resets
		}
		fmt.Fprintf(w, "%s (session %s in %s)\n", line, publish.ShortID(l.Session), l.Project)
	}
}

func printLifecycle(e *Env, h *lifecycle.HistoryEntry) {
	if h == nil {
		return
	}
	line := fmt.Sprintf("    %s: %s", h.ID, h.Status)
	if h.Status == lifecycle.StatusCleared {
		// Said once, with who did it: nothing else about it matters now.
		fmt.Fprintf(e.Stdout, "    %s: cleared by you (`carryover clear`); new sessions start without it\n", h.ID)
		return
	}
	if len(h.ConsumedBy) > 0 {
		var by []string
		for _, c := range h.ConsumedBy {
			by = append(by, fmt.Sprintf("%s session %s %s", c.Agent, publish.ShortID(c.Session), publish.Ago(e.Now(), c.At)))
		}
		line += " by " + strings.Join(by, ", ")
	}
	fmt.Fprintln(e.Stdout, line)
	for _, s := range h.Staleness {
		fmt.Fprintf(e.Stdout, "    %s\n", strings.TrimPrefix(s, "> "))
	}
}
