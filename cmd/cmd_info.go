package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
			&cli.StringFlag{Name: "project", Usage: "project directory (default: the git root of the current directory)"},
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

// agentPaths are where tl keeps its sessions (relative ones under
// project) and its hook config.
func agentPaths(e *Env, tl specs.Tool, project string) AgentPaths {
	ap := AgentPaths{Tool: tl.Name, Display: tl.Display, HookConfig: shownConfigPath(tl.ConfigPath(runtime.GOOS, e.Getenv, e.UserHome(), fileExists))}
	seen := map[string]bool{}
	add := func(p string) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(project, p)
		}
		if !seen[p] {
			seen[p] = true
			ap.Transcripts = append(ap.Transcripts, p)
		}
	}
	if l, ok := adapters.ListerFor(tl.Name); ok {
		for _, p := range l.Stores(adapterEnv(e)) {
			add(p)
		}
	}
	for _, p := range tl.TranscriptPaths(runtime.GOOS, e.Getenv, e.UserHome()) {
		add(p)
	}
	return ap
}

// printInfo prints info's text form.
func printInfo(e *Env, inf Info, cfg Config, cerrs []error) {
	w := e.Stdout
	bold := func(s string) string { return colour(e, e.StdoutTTY, "1", s) }
	fmt.Fprintf(w, "%s\n  version   %s\n  home      %s\n  ledger    %s (%d sessions)\n", bold("carryover"), inf.Version, inf.Home, inf.Ledger, inf.Sessions)
	fmt.Fprintf(w, "  config    %s%s\n", inf.Config, exists(inf.Config))
	mode := cfg.Resume
	if mode == "" {
		mode = "ask (default)"
	}
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
		inf.Sessions = len(st.ListedSessions("", "", 1_000_000))
		st.Close()
	}
	tab, err := specs.Load()
	if err != nil {
		return exitf(ExitError, "%v", err)
	}
	for _, tl := range tab.Tools() {
		inf.Agents = append(inf.Agents, agentPaths(e, tl, project))
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
	if _, err := os.Stat(p); err == nil {
		return ""
	}
	return "  (not present)"
}
