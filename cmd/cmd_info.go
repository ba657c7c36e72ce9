package cmd

import (
	"cmp"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/resume"
	"github.com/carryover/carryover/publish/service"
	"github.com/carryover/carryover/specs"
)

func infoCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "info",
		Usage: "show storage paths, context windows and configuration",
		Flags: []cli.Flag{
			projectFlag,
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
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

// storePaths are where tl keeps its sessions, once each: its lister's
// stores and the table's transcript paths (relative ones under project,
// none when project is "").
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

// printInfo prints info's text form.
func printInfo(e *Env, inf Info, cfg Config, cerrs []error) {
	w := e.Stdout
	bold := func(s string) string { return colour(e, e.StdoutTTY, "1", s) }
	fmt.Fprintf(w, "%s\n  version   %s\n  home      %s\n  ledger    %s (%d sessions)\n", bold("carryover"), inf.Version, inf.Home, inf.Ledger, inf.Sessions)
	fmt.Fprintf(w, "  config    %s%s\n", inf.Config, exists(inf.Config))
	mode := cmp.Or(cfg.Resume, "ask (default)")
	fmt.Fprintf(w, "  resume    %s\n  redact    %v\n", mode, cfg.RedactOn())
	if len(cfg.Tools) > 0 {
		fmt.Fprintf(w, "  tools     %s\n", strings.Join(cfg.Tools, ", "))
	}
	for _, ce := range cerrs {
		fmt.Fprintf(w, "  config problem: %v\n", ce)
	}
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

// shownConfigPath is a hook config path as printed: a per-event layout
// (Cline's hooks/{{event}}) names the event as <event>, like install's
// summary (hookconf.Target.Where), not as the template slot.
func shownConfigPath(p string) string { return strings.ReplaceAll(p, specs.EventSlot, "<event>") }

func runInfo(e *Env, projectFlag string, asJSON bool) error {
	project, err := currentProject(e, projectFlag)
	if err != nil {
		return err
	}
	cfg, cerrs := LoadConfig(e, project)
	inf := Info{Version: buildVersion().Version, Home: e.Home(), Ledger: filepath.Join(e.Home(), service.LedgerFile), Config: e.ConfigPath(), Settings: configSettings(e, project), Project: project,
		Outputs: []string{publish.HandoffPath(project), ResumePath(project, "md"), SessionPath(project)}}
	if st, err := service.OpenStore(e.service()); err == nil {
		inf.Sessions = st.Stats().Sessions // a COUNT, as status has it
		st.Close()
	}
	tab, err := specs.Load()
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	for _, tl := range tab.Tools() {
		inf.Agents = append(inf.Agents, AgentPaths{Tool: tl.Name, Display: tl.Display, Transcripts: storePaths(e, tl, project),
			HookConfig: shownConfigPath(tl.ConfigPath(runtime.GOOS, e.Getenv, e.UserHome(), publish.Exists))})
	}
	for _, t := range resume.Targets() {
		b, _ := resume.Budget(t, 0)
		inf.Targets = append(inf.Targets, TargetInfo{Target: t, Window: resume.Window(t), Budget: b})
	}
	if asJSON {
		return printJSON(e.Stdout, inf)
	}
	printInfo(e, inf, cfg, cerrs)
	return nil
}

func exists(p string) string {
	if publish.Exists(p) {
		return ""
	}
	return "  (not present)"
}

func detectCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:        "detect",
		Usage:       "show which AI coding agents are installed (✓/✗); exit 1 when none is",
		Description: "An agent counts as detected when its binary is on PATH or its session store exists.",
		Flags:       []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action:      func(c *cli.Context) error { return runDetect(e, c.Bool("json")) },
	}
}

// Detection is one agent's `detect` line.
type Detection struct {
	Tool     string   `json:"agent"`
	Display  string   `json:"display"`
	Detected bool     `json:"detected"`
	Binary   string   `json:"binary,omitempty"`
	Version  string   `json:"version,omitempty"`
	Stores   []string `json:"stores,omitempty"` // existing session stores
	Hint     string   `json:"hint,omitempty"`
	Problem  string   `json:"problem,omitempty"`

	// VersionFrom: package.json, install path, self-update or version command.
	VersionFrom string `json:"version_from,omitempty"`
}

func detect(e *Env, project string) ([]Detection, error) {
	tab, err := specs.Load()
	if err != nil {
		return nil, err
	}
	var out []Detection
	for _, a := range detectAgents(e, tab) {
		tl, _ := tab.Tool(a.Tool)
		d := Detection{Tool: a.Tool, Display: a.Display, Binary: a.Binary, Version: a.Version, VersionFrom: a.VersionFrom, Problem: a.Problem}
		for _, p := range storePaths(e, tl, project) {
			if publish.Exists(p) {
				d.Stores = append(d.Stores, p)
			}
		}
		d.Detected = d.Binary != "" || len(d.Stores) > 0
		if !d.Detected {
			d.Hint = tl.InstallHint
			d.Problem = ""
		}
		out = append(out, d)
	}
	return out, nil
}

func runDetect(e *Env, asJSON bool) error {
	project, _ := currentProject(e, "")
	stop := spinner(e, "looking for agents…")
	ds, err := detect(e, project)
	stop()
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	n := 0
	for _, d := range ds {
		if d.Detected {
			n++
		}
	}
	if asJSON {
		if err := printJSON(e.Stdout, struct {
			Agents   []Detection `json:"agents"`
			Detected int         `json:"detected"`
		}{nonNil(ds), n}); err != nil {
			return err
		}
	} else {
		for _, d := range ds {
			fmt.Fprintln(e.Stdout, strings.TrimRight(detectLine(e, d), " "))
		}
	}
	if n == 0 {
		return exitf(ExitError, "no agents detected: none of %d supported agents is on PATH or has a session store; "+
			"install one (e.g. %s), or set %s if yours live elsewhere", len(ds), firstHint(ds), strings.Join(specs.StoreVariables(runtime.GOOS), "/"))
	}
	return nil
}

// detectLine is detect's line for agent d.
func detectLine(e *Env, d Detection) string {
	line := fmt.Sprintf("%s %-22s", checkMark(e, d.Detected), d.Display)
	if !d.Detected {
		return line + " not found (install: " + d.Hint + ")"
	}
	var parts []string
	if d.Version != "" {
		parts = append(parts, d.Version)
	}
	parts = append(parts, cmp.Or(d.Binary, "(not on PATH)"))
	if len(d.Stores) > 0 {
		parts = append(parts, "sessions: "+strings.Join(d.Stores, ", "))
	}
	if d.Problem != "" {
		parts = append(parts, "note: "+d.Problem)
	}
	return line + " " + strings.Join(parts, "  ")
}

// firstHint is the install hint of the first agent of the table.
func firstHint(ds []Detection) string {
	if len(ds) == 0 {
		return "see `carryover detect`"
	}
	return ds[0].Hint
}
