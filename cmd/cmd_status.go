package cmd

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/lifecycle"
	"github.com/carryover/carryover/publish/resume"
	"github.com/carryover/carryover/publish/service"
	"github.com/carryover/carryover/specs"
)

// The read-only reports: status, info, detect.

func statusCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show agents, hooks, the ledger, each project's handoff and who received it (read-only)",
		Flags: []cli.Flag{jsonFlag("machine-readable output"),
			&cli.BoolFlag{Name: "space", Usage: "the ledger's size per table and index too (reads the whole ledger)"}},
		Action: func(c *cli.Context) error {
			st := collectStatus(e, c.Bool("space"))
			return output(e, c.Bool("json"), st, func() { printStatus(plainEnv(e), st) })
		},
	}
}

// StatusReport is `carryover status --json`.
type StatusReport struct {
	Home     string                  `json:"home"`
	Agents   []AgentReport           `json:"agents"`
	Ledger   LedgerReport            `json:"ledger"`
	Projects []service.ProjectStatus `json:"projects"` // each current handoff and its delivery receipts
	Walls    WallsReport             `json:"limits"`
	Guest    GuestReport             `json:"in_projects"`
	Problems []string                `json:"problems,omitempty"`
	Ignored  []string                `json:"config_ignored,omitempty"` // what the project config asked for and the policy ignores
	Config   []string                `json:"config_warnings,omitempty"`
}

// GuestReport is what carryover writes in projects and what the user told it to leave alone or forget.
type GuestReport struct {
	Pointer   string   `json:"pointer"`
	Ignore    []string `json:"ignore"`
	Forgotten int      `json:"forgotten_handoffs"`
	LeftAlone []string `json:"left_alone,omitempty"` // the current project's files git tracks that carryover does not write
}

// AgentReport is one agent's line. Restore: how the handoff reaches an agent that cannot be told at session start.
// Read: its recent sessions (issue 12: unreadable is not empty; drift names a newer format).
type AgentReport struct {
	Tool       string           `json:"tool"`
	Display    string           `json:"display"`
	Detected   bool             `json:"detected"`
	Binary     string           `json:"binary,omitempty"`
	Version    string           `json:"version,omitempty"`
	SpecRow    string           `json:"spec_row,omitempty"`
	Fallback   bool             `json:"fallback,omitempty"`
	Warning    string           `json:"warning,omitempty"`
	ConfigPath string           `json:"config_path,omitempty"`
	Hooks      string           `json:"hooks"`
	HookDetail string           `json:"hook_detail,omitempty"`
	HookWarns  []string         `json:"hook_warnings,omitempty"` // the agent's settings that stop its hooks (specs' hook_file warnings)
	Events     []string         `json:"events,omitempty"`
	Problem    string           `json:"problem,omitempty"`
	Restore    string           `json:"restore,omitempty"`
	Read       *adapters.Survey `json:"read,omitempty"`
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

// WallsReport is the [limits]/[context] configuration and the last limit each agent hit.
type WallsReport struct {
	AutoResume        bool                `json:"auto_resume"`
	WarnPercent       float64             `json:"warn_percent"`
	MaxRestarts       int                 `json:"max_restarts"`
	RestartAtCritical bool                `json:"restart_at_critical"`
	Thresholds        [3]int              `json:"context_thresholds"` // early warn, warn, critical (%)
	Problems          []string            `json:"problems,omitempty"`
	Last              []service.LastLimit `json:"last,omitempty"`
}

// collectStatus is status's report; tables adds the ledger's size per table and index (dbstat reads every page; per
// project is cheap at any size). Status never creates a ledger.
func collectStatus(e *Env, tables bool) (st StatusReport) {
	cwdProject, _ := currentProject(e, "")
	defer func() { // the config warnings of the current project and every project reported
		ps := append([]string{cwdProject}, publish.Map(st.Projects, func(p service.ProjectStatus) string { return p.Project })...)
		st.Config = config.Warnings(e.ConfigPath(), e.UserHome(), slices.DeleteFunc(ps, func(p string) bool { return p == "" }))
	}()
	cfg, _ := LoadConfig(e, "")
	w := cfg.Walls()
	t := w.Thresholds()
	gcfg, _ := LoadConfig(e, cwdProject)
	st = StatusReport{Home: e.Home(), Guest: GuestReport{Pointer: gcfg.PointerMode(), Ignore: append([]string{}, gcfg.Ignore...)},
		Walls: WallsReport{AutoResume: w.AutoResume(), WarnPercent: w.WarnPercent(), MaxRestarts: w.MaxRestarts(),
			RestartAtCritical: w.RestartAtCritical(), Thresholds: [3]int{t.EarlyWarn, t.Warn, t.Critical}, Problems: w.Problems()}}
	if cwdProject != "" {
		st.Ignored, st.Guest.LeftAlone = gcfg.Ignored, publish.LeftAlone(cwdProject, st.Guest.Pointer)
	}
	st.Agents = agentReports(e, st.Guest.Pointer)
	st.Ledger.Path = filepath.Join(e.Home(), service.LedgerFile)
	if fi, err := os.Stat(st.Ledger.Path); err == nil {
		st.Ledger.Exists, st.Ledger.Bytes = true, fi.Size()
		if wal, err := os.Stat(st.Ledger.Path + "-wal"); err == nil {
			st.Ledger.Bytes += wal.Size()
		}
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
			ConfigPath: a.Hooks.Path, Hooks: string(a.Hooks.State), HookDetail: a.Hooks.Detail, HookWarns: a.Hooks.Warnings, Events: a.Hooks.Hooks, Problem: a.Problem}
		switch {
		case !a.Detected() || a.Capability.Tool == "" || a.Capability.StartInjection:
		case pointer == publish.PointerNever:
			r.Restore = "restore: " + a.Display + " cannot be told at session start and pointer = \"never\", so it receives no handoff; `carryover config set pointer auto` gives it the pointer block in AGENTS.md"
		default:
			r.Restore = "restore: " + a.Display + " cannot be told at session start; the handoff reaches it through the pointer block in AGENTS.md (pointer = \"" + pointer + "\")"
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
	printWalls(e, st.Walls)
	printLines(w, "problem: ", st.Problems...)
	printLines(w, "config: ignored ", st.Ignored...)
	if len(st.Config) > 0 {
		fmt.Fprintln(w, "\nConfig (fix these keys; see `carryover config`)")
		printLines(w, "  warning: ", st.Config...)
	}
}

// printAgentStatus prints an agent's line, its config and notes; one neither detected nor wired gets one line.
func printAgentStatus(w io.Writer, a AgentReport) {
	mark, ver := "✗", "not detected"
	if a.Detected {
		mark, ver = "✓", a.Version
	}
	if !a.Detected && (a.Hooks == "missing" || a.Hooks == "no hooks") {
		fmt.Fprintf(w, "  %s %-22s not detected\n", mark, a.Display)
	} else {
		fmt.Fprintf(w, "  %s %-22s %-10s hooks: %s", mark, a.Display, ver, a.Hooks)
		if a.SpecRow != "" {
			fmt.Fprintf(w, "  (spec %s)", a.SpecRow)
		}
		fmt.Fprintln(w)
		printLines(w, "      config: ", a.ConfigPath)
		printLines(w, "      ", a.HookDetail, a.Warning, a.Problem, a.Restore)
		printLines(w, "      warning: ", a.HookWarns...)
	}
	// What reading its recent sessions found, and one warning per transcript written by a newer agent than known.
	if sv := a.Read; sv != nil {
		fmt.Fprintf(w, "      %s\n", sv)
		for i, d := range sv.Drift {
			if !slices.Contains(sv.Drift[:i], d) {
				fmt.Fprintf(w, "      warning: %s\n", d)
			}
		}
	}
}

func printLedger(e *Env, l LedgerReport) {
	w := e.Stdout
	fmt.Fprintf(w, "\nLedger  %s\n", l.Path)
	if !l.Exists {
		fmt.Fprintln(w, "  no ledger yet: nothing has been captured (install hooks with `carryover install`, or run `carryover handoff`)")
		return
	}
	parts := publish.Map(slices.Sorted(maps.Keys(l.ByTool)), func(t string) string { return fmt.Sprintf("%s %d", t, l.ByTool[t]) })
	fmt.Fprintf(w, "  %s, %d sessions (%s), %d rows\n", humanBytes(l.Bytes), l.Sessions, strings.Join(parts, ", "), l.Rows)
	printSpace(e, l.Space)
}

func printProjectStatus(e *Env, p service.ProjectStatus) {
	w := e.Stdout
	if p.Header == "" {
		fmt.Fprintf(w, "  %s\n    %s\n", p.Project, p.NotInjected)
		return
	}
	fmt.Fprintf(w, "  %s\n    %s (%s)\n", p.Project, strings.TrimPrefix(p.Header, "# "), publish.Ago(e.Now(), p.Written))
	printLines(w, "    ", p.Quality, p.NotInjected)
	if h := p.Lifecycle; h != nil && h.Status == lifecycle.StatusCleared { // said once, with who did it
		fmt.Fprintf(w, "    %s: cleared by you (`carryover clear`); new sessions start without it\n", h.ID)
		return
	} else if h != nil {
		line := fmt.Sprintf("    %s: %s", h.ID, h.Status)
		if len(h.ConsumedBy) > 0 {
			line += " by " + strings.Join(publish.Map(h.ConsumedBy, func(c lifecycle.ConsumerReport) string {
				return fmt.Sprintf("%s session %s %s", c.Agent, publish.ShortID(c.Session), publish.Ago(e.Now(), c.At))
			}), ", ")
		}
		fmt.Fprintln(w, line)
		for _, s := range h.Staleness {
			fmt.Fprintf(w, "    %s\n", strings.TrimPrefix(s, "> "))
		}
	}
	if len(p.Receipts) == 0 {
		fmt.Fprintln(w, "    not delivered to any session yet")
	}
	for _, r := range p.Receipts {
		which := map[bool]string{false: "an earlier handoff", true: "this handoff"}[r.Current]
		fmt.Fprintf(w, "    → %s session %s received %s (%s, %s)\n", r.Tool, publish.ShortID(r.Session), which, r.Via, publish.Ago(e.Now(), r.At))
	}
	printLines(w, "    context of its session: ", p.Context)
}

// printLines prints each of lines (strings or errors) that is not empty after prefix.
func printLines[T any](w io.Writer, prefix string, lines ...T) {
	for _, l := range lines {
		if s := fmt.Sprint(l); s != "" {
			fmt.Fprintf(w, "%s%s\n", prefix, s)
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
	printLines(w, "  left alone here (git tracks them: team files): ", strings.Join(g.LeftAlone, ", "))
	if g.Forgotten > 0 {
		fmt.Fprintf(w, "  forgotten sessions: %d handoff record(s) say \"forgotten\" (`carryover forget SESSION`)\n", g.Forgotten)
	}
}

// printSpace names the 5 biggest projects (by their share of rows) and, with --space, each table's size.
func printSpace(e *Env, sp *service.Space) {
	if sp == nil {
		return
	}
	w := e.Stdout
	var rows int64
	for _, p := range sp.Projects {
		rows += p.Rows
	}
	for i, p := range sp.Projects {
		if i == 5 {
			fmt.Fprintf(w, "    … %d more projects\n", len(sp.Projects)-i)
			break
		}
		share := int64(0)
		if rows > 0 {
			share = (sp.FileBytes - sp.FreeBytes) * p.Rows / rows
		}
		fmt.Fprintf(w, "    ~%-9s %s: %d sessions, %d rows, last active %s\n", humanBytes(share), p.Project, p.Sessions, p.Rows, publish.Ago(e.Now(), p.LastActive))
	}
	for _, t := range sp.Tables {
		fmt.Fprintf(w, "    %-9s %s\n", humanBytes(t.Bytes), t.Name)
	}
	printLines(w, "    ", sp.TablesNote)
	if sp.FreeBytes > 0 {
		hint := "`carryover gc` gives it back"
		if !sp.AutoVacuum {
			hint = "reused by new rows; the ledger predates auto-vacuum: `carryover gc --vacuum` once gives it back"
		}
		fmt.Fprintf(w, "    %s free inside the file (%s)\n", humanBytes(sp.FreeBytes), hint)
	}
	fmt.Fprintln(w, "    `carryover gc --older-than 180d` removes old sessions' rows (never handoffs or decisions)")
}

func printWalls(e *Env, c WallsReport) {
	w := e.Stdout
	auto := map[bool]string{false: "off", true: "on"}[c.AutoResume]
	fmt.Fprintf(w, "\nLimits  RESUME.md on a limit: %s, ahead of time from %.0f %% used; context levels %d/%d/%d %%; carryover run restarts ≤ %d\n",
		auto, c.WarnPercent, c.Thresholds[0], c.Thresholds[1], c.Thresholds[2], c.MaxRestarts)
	printLines(w, "  config: ", c.Problems...)
	for _, l := range c.Last {
		line := fmt.Sprintf("  last limit of %s: %s %s", resume.DisplayName(l.Tool), strings.ReplaceAll(l.Kind, "_", " "), publish.Ago(e.Now(), l.At))
		if l.Resets != "" {
			line += ", resets " + l.Resets
		}
		fmt.Fprintf(w, "%s (session %s in %s)\n", line, publish.ShortID(l.Session), l.Project)
	}
}

func infoCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:   "info",
		Usage:  "show storage paths, context windows and configuration",
		Flags:  []cli.Flag{projectFlag, jsonFlag("print JSON")},
		Action: func(c *cli.Context) error { return runInfo(e, c.String("project"), c.Bool("json")) },
	}
}

// Info is what `carryover info` reports.
type Info struct {
	Version  string         `json:"version"`
	Home     string         `json:"home"`
	Ledger   string         `json:"ledger"`
	Sessions int            `json:"ledger_sessions"`
	Config   string         `json:"config"`
	Settings map[string]any `json:"settings"` // key → value in effect (`carryover config`)
	Project  string         `json:"project"`
	Outputs  []string       `json:"outputs"`
	Agents   []AgentPaths   `json:"agents"`
	Targets  []TargetInfo   `json:"targets"`
}

// AgentPaths are one agent's storage locations.
type AgentPaths struct {
	Tool        string   `json:"agent"`
	Display     string   `json:"display"`
	HookConfig  string   `json:"hook_config,omitempty"`
	Transcripts []string `json:"transcripts"`
}

// TargetInfo is one handoff target's window and budget.
type TargetInfo struct {
	Target string `json:"target"`
	Window int    `json:"context_window"`
	Budget int    `json:"budget"`
}

// storePaths are where tl keeps its sessions, each once: its lister's stores and the table's (relative: in project).
func storePaths(e *Env, tl specs.Tool, project string) []string {
	var cands, out []string
	if l, ok := adapters.ListerFor(tl.Name); ok {
		cands = l.Stores(adapterEnv(e))
	}
	for _, p := range append(cands, tl.TranscriptPaths(runtime.GOOS, e.Getenv, e.UserHome())...) {
		if !filepath.IsAbs(p) && project != "" {
			p = filepath.Join(project, p)
		}
		if filepath.IsAbs(p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func printInfo(e *Env, inf Info, cfg Config, cerrs []error) {
	w := e.Stdout
	bold := func(s string) string { return colour(e, e.StdoutTTY, "1", s) }
	fmt.Fprintf(w, "%s\n  version   %s\n  home      %s\n  ledger    %s (%d sessions)\n", bold("carryover"), inf.Version, inf.Home, inf.Ledger, inf.Sessions)
	fmt.Fprintf(w, "  config    %s%s\n", inf.Config, exists(inf.Config))
	fmt.Fprintf(w, "  resume    %s\n  redact    %v\n", cmp.Or(cfg.Resume, "ask (default)"), cfg.RedactOn())
	printLines(w, "  tools     ", strings.Join(cfg.Tools, ", "))
	printLines(w, "  config problem: ", cerrs...)
	fmt.Fprintf(w, "\n%s %s\n", bold("project"), inf.Project)
	for _, p := range inf.Outputs {
		fmt.Fprintf(w, "  %s%s\n", p, exists(p))
	}
	fmt.Fprintf(w, "\n%s\n", bold("agents (session stores)"))
	for _, a := range inf.Agents {
		fmt.Fprintf(w, "  %s\n", a.Display)
		for _, p := range a.Transcripts {
			fmt.Fprintf(w, "    sessions  %s%s\n", p, exists(p))
		}
		if a.HookConfig != "" {
			fmt.Fprintf(w, "    hooks     %s%s\n", a.HookConfig, exists(a.HookConfig))
		}
	}
	fmt.Fprintf(w, "\n%s (budget = %d%% of the context window unless --tokens)\n", bold("handoff targets"), int(resume.BudgetShare*100))
	for _, t := range inf.Targets {
		fmt.Fprintf(w, "  %-12s window %9d  budget %9d\n", t.Target, t.Window, t.Budget)
	}
}

func runInfo(e *Env, projectFlag string, asJSON bool) error {
	project, err := currentProject(e, projectFlag)
	if err != nil {
		return err
	}
	tab, err := specs.Load()
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	cfg, cerrs := LoadConfig(e, project)
	vals, _ := resolveConfig(e, project)
	inf := Info{Version: buildVersion().Version, Home: e.Home(), Ledger: filepath.Join(e.Home(), service.LedgerFile), Config: e.ConfigPath(), Settings: map[string]any{}, Project: project,
		Outputs: []string{publish.HandoffPath(project), ResumePath(project, "md"), SessionPath(project)}}
	for _, v := range vals {
		inf.Settings[v.Key] = tomlValue(v.Value)
	}
	if st, err := service.OpenStore(e.service()); err == nil {
		inf.Sessions = st.Stats().Sessions // a COUNT, as status has it
		st.Close()
	}
	inf.Agents = publish.Map(tab.Tools(), func(tl specs.Tool) AgentPaths {
		return AgentPaths{Tool: tl.Name, Display: tl.Display, Transcripts: storePaths(e, tl, project), HookConfig: installTarget(e, tl).Where()}
	})
	for _, t := range resume.Targets() {
		b, _ := resume.Budget(t, 0)
		inf.Targets = append(inf.Targets, TargetInfo{Target: t, Window: resume.Window(t), Budget: b})
	}
	return output(e, asJSON, inf, func() { printInfo(e, inf, cfg, cerrs) })
}

func exists(p string) string { return map[bool]string{false: "  (not present)"}[publish.Exists(p)] }

func detectCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:        "detect",
		Usage:       "show which AI coding agents are installed (✓/✗); exit 1 when none is",
		Description: "An agent counts as detected when its binary is on PATH or its session store exists.",
		Flags:       []cli.Flag{jsonFlag("print JSON")},
		Action:      func(c *cli.Context) error { return runDetect(e, c.Bool("json")) },
	}
}

// Detection is one agent's `detect` line; VersionFrom: package.json, install path, self-update or version command.
type Detection struct {
	Tool     string   `json:"agent"`
	Display  string   `json:"display"`
	Detected bool     `json:"detected"`
	Binary   string   `json:"binary,omitempty"`
	Version  string   `json:"version,omitempty"`
	Stores   []string `json:"stores,omitempty"` // existing session stores
	Hint     string   `json:"hint,omitempty"`
	Problem  string   `json:"problem,omitempty"`

	VersionFrom string `json:"version_from,omitempty"`
}

func runDetect(e *Env, asJSON bool) error {
	project, _ := currentProject(e, "")
	stop := spinner(e, "looking for agents…")
	ds, n, err := detect(e, project)
	stop()
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	if err := output(e, asJSON, struct {
		Agents   []Detection `json:"agents"`
		Detected int         `json:"detected"`
	}{nonNil(ds), n}, func() {
		for _, d := range ds {
			fmt.Fprintln(e.Stdout, strings.TrimRight(detectLine(e, d), " "))
		}
	}); err != nil {
		return err
	}
	if n == 0 {
		hint := "see `carryover detect`"
		if len(ds) > 0 {
			hint = ds[0].Hint
		}
		return exitf(ExitError, "no agents detected: none of %d supported agents is on PATH or has a session store; "+
			"install one (e.g. %s), or set %s if yours live elsewhere", len(ds), hint, strings.Join(specs.StoreVariables(runtime.GOOS), "/"))
	}
	return nil
}

// detect is every agent's detection and how many are detected.
func detect(e *Env, project string) (ds []Detection, n int, err error) {
	tab, err := specs.Load()
	if err == nil {
		for _, a := range detectAgents(e, tab) {
			tl, _ := tab.Tool(a.Tool)
			d := Detection{Tool: a.Tool, Display: a.Display, Binary: a.Binary, Version: a.Version, VersionFrom: a.VersionFrom, Problem: a.Problem}
			d.Stores = slices.DeleteFunc(storePaths(e, tl, project), func(p string) bool { return !publish.Exists(p) })
			if d.Detected = d.Binary != "" || len(d.Stores) > 0; d.Detected {
				n++
			} else {
				d.Hint, d.Problem = tl.InstallHint, ""
			}
			ds = append(ds, d)
		}
	}
	return ds, n, err
}

// detectLine is detect's line for agent d.
func detectLine(e *Env, d Detection) string {
	line := fmt.Sprintf("%s %-22s", checkMark(e, d.Detected), d.Display)
	if !d.Detected {
		return line + " not found (install: " + d.Hint + ")"
	}
	parts := []string{d.Version, cmp.Or(d.Binary, "(not on PATH)")}
	if len(d.Stores) > 0 {
		parts = append(parts, "sessions: "+strings.Join(d.Stores, ", "))
	}
	if d.Problem != "" {
		parts = append(parts, "note: "+d.Problem)
	}
	return line + " " + strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), "  ")
}
