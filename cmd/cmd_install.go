package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/config"
	"github.com/carryover/carryover/publish/safefile"
	"github.com/carryover/carryover/publish/service"
	"github.com/carryover/carryover/specs"
	"github.com/carryover/carryover/specs/hookconf"
)

// install, refresh and uninstall: detect agents, write carryover's hook stubs
// into their configs (specs/hookconf), and report per agent. agentStatus is the
// agent part of `carryover status`.

// AgentStatus is one agent's detection and hook state: Binary is ""
// when not detected, VersionFrom a specs.Source, Capability zero when not
// detected or unsupported, Problem a detection or resolution failure.
type AgentStatus struct {
	Tool, Display, Binary, Version, VersionFrom string
	Capability                                  specs.Capability
	Hooks                                       hookconf.Status
	Problem                                     string
}

func (a AgentStatus) Detected() bool { return a.Binary != "" }

func installCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "install",
		Usage: "detect agents and add carryover's hooks to their configs",
		Description: "Finds " + strings.Join(adapters.Displays(), ", ") + " on PATH,\n" +
			"lets you pick which to set up (on a terminal), saves the choice to $CARRYOVER_HOME/config.toml\n" +
			"and merges hook stubs into each agent's own config (backing each file up once to *.carryover.bak).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tools", Usage: "comma-separated agents to set up (default: detected ones)"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "ask nothing"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the changes as diffs; write nothing"},
			&cli.StringFlag{Name: "resume", Usage: "how the next session opens: ask, brief or silent (saved to config.toml; asked on a terminal)"},
		},
		Action: func(c *cli.Context) error {
			return runInstall(e, installOptions{tools: c.String("tools"), yes: c.Bool("yes"), dryRun: c.Bool("dry-run"), resume: c.String("resume")})
		},
	}
}

func refreshCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "refresh",
		Usage: "re-detect agent versions and rewrite carryover's hooks where they drifted",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print the changes as diffs; write nothing"},
		},
		Action: func(c *cli.Context) error {
			return runInstall(e, installOptions{yes: true, dryRun: c.Bool("dry-run"), refresh: true})
		},
	}
}

func uninstallCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "uninstall",
		Usage: "remove carryover's hooks from every agent config (--purge: and every trace in projects)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tools", Usage: "comma-separated agents (default: all)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the changes as diffs; write nothing"},
			&cli.BoolFlag{Name: "purge", Usage: "also take carryover out of every project the ledger knows: .carryover/, pointer blocks, the .gitignore entry (files restored byte for byte)"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "with --purge: also delete the ledger and carryover's home"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("yes") && !c.Bool("purge") {
				return usageErrorf("carryover uninstall --help", "--yes goes with --purge (it deletes the ledger too)")
			}
			err := runUninstall(e, c.String("tools"), c.Bool("dry-run"))
			if c.Bool("purge") {
				if perr := runPurge(e, c.Bool("dry-run"), c.Bool("yes")); err == nil {
					err = perr
				}
			}
			return err
		},
	}
}

// installOptions: resume is the mode to save ("" = ask on a terminal).
type installOptions struct {
	tools, resume        string
	yes, dryRun, refresh bool
}

// pluginEnabled is the id of carryover's plugin for the agent when its
// settings file enables it (the agent's descriptor reads it), else "".
func pluginEnabled(tl specs.Tool, settings string) string {
	a, ok := adapters.ByName(tl.Name)
	if !ok || a.PluginEnabled == nil || settings == "" {
		return ""
	}
	b, err := safefile.ReadFile(settings, 4<<20)
	if err != nil {
		return ""
	}
	return a.PluginEnabled(b)
}

func installTarget(e *Env, tl specs.Tool) hookconf.Target {
	t := hookconf.TargetFor(tl, runtime.GOOS, e.Getenv, e.UserHome(), publish.Exists)
	t.Record = filepath.Join(e.Home(), hookconf.RecordFile)
	return t
}

// detectAgents finds and versions every agent concurrently.
func detectAgents(e *Env, tab *specs.Table) []AgentStatus {
	tools := tab.Tools()
	out := make([]AgentStatus, len(tools))
	var wg sync.WaitGroup
	for i, tl := range tools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = detectAgent(e, tab, tl)
		}()
	}
	wg.Wait()
	return out
}

func detectAgent(e *Env, tab *specs.Table, tl specs.Tool) AgentStatus {
	a := AgentStatus{Tool: tl.Name, Display: tl.Display}
	for _, b := range tl.Binaries {
		if p := lookPath(e, b); p != "" {
			a.Binary = p
			break
		}
	}
	if a.Binary == "" {
		return a
	}
	p := specs.DetectVersion(tl, a.Binary, specs.ProbeEnv{
		GOOS: runtime.GOOS, Getenv: e.Getenv, Home: e.UserHome(),
		Environ: append(slices.Clone(e.Environ), "PATH="+absPATH(e), "HOME="+e.UserHome(), "NO_COLOR=1"),
	})
	a.Version, a.VersionFrom = p.Version, string(p.Source)
	if p.Err != nil {
		a.Problem = p.Err.Error() + "; assuming the newest known hooks"
	}
	c, err := tab.Resolve(tl.Name, a.Version)
	if err != nil {
		a.Problem = err.Error()
		return a
	}
	a.Capability = c
	return a
}

// lookPath searches env's PATH (not the process's) for an executable:
// the one lookup for every program carryover starts (agents, their
// version probes, the shell doctor runs hooks with). Only absolute
// entries count (absPATH).
func lookPath(e *Env, name string) string {
	exts := []string{""}
	if runtime.GOOS == "windows" {
		exts = []string{".exe", ".cmd", ".bat", ""}
	}
	for _, dir := range filepath.SplitList(absPATH(e)) {
		for _, ext := range exts {
			p := filepath.Join(dir, name+ext)
			fi, err := os.Stat(p)
			if err != nil || fi.IsDir() {
				continue
			}
			if runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0 {
				continue
			}
			return p
		}
	}
	return ""
}

// absPATH is env's PATH without its relative entries: an empty entry,
// ".", or "./node_modules/.bin" resolves against the current directory,
// usually a repository carryover treats as hostile, and would let it
// plant the `claude` or `node` carryover runs (Go's exec.LookPath refuses
// such results too, with ErrDot). Programs carryover starts get this PATH
// when they only check something for carryover (version probes, doctor).
func absPATH(e *Env) string {
	var keep []string
	for _, dir := range filepath.SplitList(e.Getenv("PATH")) {
		if filepath.IsAbs(dir) {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

func agentStatus(e *Env) []AgentStatus {
	tab, err := specs.Load()
	if err != nil {
		return []AgentStatus{{Problem: err.Error()}}
	}
	return checkHooks(e, tab, detectAgents(e, tab))
}

func checkHooks(e *Env, tab *specs.Table, agents []AgentStatus) []AgentStatus {
	for i := range agents {
		a := &agents[i]
		tl, _ := tab.Tool(a.Tool)
		c := a.Capability
		if c.Tool == "" { // not detected or unsupported: check against the newest row
			c, _ = tab.Resolve(a.Tool, "")
		}
		st, err := hookconf.Check(installTarget(e, tl), c, e.Executable, hookconf.OSFS{})
		if err != nil {
			st.State, st.Detail = hookconf.StateDrifted, err.Error()
		}
		a.Hooks = st
	}
	return agents
}

func parseToolList(s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if !slices.Contains(specs.Names(), t) {
			return nil, exitf(ExitError, "unknown agent %q in --tools; choose from %s", t, strings.Join(specs.Names(), ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

func runInstall(e *Env, o installOptions) error {
	tab, err := specs.Load()
	if err != nil {
		return err
	}
	if o.resume != "" && !slices.Contains(config.ResumeModes, o.resume) {
		return exitf(ExitError, "--resume is one of %s, not %q", strings.Join(config.ResumeModes, ", "), o.resume)
	}
	agents := detectAgents(e, tab)
	cfg, _ := LoadConfig(e, "")
	agents, sel, remove, err := selectInstall(e, tab, &o, agents, cfg)
	if err != nil {
		return err
	}
	if !o.dryRun && !o.refresh {
		saveInstallChoice(e, sel, o.resume)
	}
	failed, recs := installSelected(e, o, tab, agents, sel)
	if !o.dryRun && len(recs) > 0 {
		saveAgentRecords(e, recs)
	}
	if !o.refresh {
		fmt.Fprintln(e.Stdout, projectsLine(e, cfg))
	}
	if len(remove) > 0 {
		if err := runUninstall(e, strings.Join(remove, ","), o.dryRun); err != nil {
			return err
		}
	}
	if failed > 0 {
		return exitf(ExitError, "%d agent(s) could not be set up; see the lines above", failed)
	}
	return nil
}

// saveInstallChoice keeps the chosen agents and resume mode in the config
// (refresh reads them back); a failure is only told.
func saveInstallChoice(e *Env, sel []string, resume string) {
	if err := config.SetKeyInFile(e.ConfigPath(), "tools", config.Strings(sel), 0o600); err != nil {
		fmt.Fprintf(e.Stderr, "carryover: could not save the selection to %s: %v\n", e.ConfigPath(), err)
	}
	saveResumeMode(e, resume)
}

// saveAgentRecords keeps the set-up agents' versions (doctor and refresh
// compare them); a failure is only told.
func saveAgentRecords(e *Env, recs map[string]service.AgentRecord) {
	if err := service.SaveAgentRecords(e.Home(), recs); err != nil {
		fmt.Fprintf(e.Stderr, "carryover: could not record the agents' versions in %s: %v\n", filepath.Join(e.Home(), service.AgentsFile), err)
	}
}

// selectInstall picks the agents to set up: those named by --tools, the
// saved selection on refresh, else the detected ones (ticked in a menu on
// a terminal, which may also change o.resume and name agents whose hooks
// to remove). agents comes back with hook states when the menu needed them.
func selectInstall(e *Env, tab *specs.Table, o *installOptions, agents []AgentStatus, cfg Config) (_ []AgentStatus, sel, remove []string, err error) {
	switch {
	case o.tools != "":
		sel, err = parseToolList(o.tools)
		return agents, sel, nil, err
	case o.refresh && cfg.Tools != nil:
		return agents, cfg.Tools, nil, nil
	}
	for _, a := range agents {
		if a.Detected() {
			sel = append(sel, a.Tool)
		}
	}
	if len(sel) == 0 {
		return nil, nil, nil, exitf(ExitError, "no agents detected on PATH; install one (e.g. %s), then run `carryover install`", strings.Join(adapters.Displays()[:min(3, len(adapters.All))], ", "))
	}
	if e.StdinTTY && e.StdoutTTY && !o.yes {
		agents = checkHooks(e, tab, agents) // unticking an agent with hooks asks about them
		sel, o.resume, remove, err = chooseInstall(e, agents, sel, o.resume, cfg.Resume)
	}
	return agents, sel, remove, err
}

// installSelected sets up every selected agent: how many failed, and the
// versions set up.
func installSelected(e *Env, o installOptions, tab *specs.Table, agents []AgentStatus, sel []string) (failed int, recs map[string]service.AgentRecord) {
	byName := map[string]AgentStatus{}
	for _, a := range agents {
		byName[a.Tool] = a
	}
	recs = map[string]service.AgentRecord{}
	for _, name := range sel {
		tl, _ := tab.Tool(name)
		if !installAgent(e, o, tl, byName[name], recs) {
			failed++
		}
	}
	return failed, recs
}

// installAgent sets up one selected agent and prints its line; false when
// it counts as a failure (exit 1). recs gets the agent's version.
func installAgent(e *Env, o installOptions, tl specs.Tool, a AgentStatus, recs map[string]service.AgentRecord) bool {
	if !a.Detected() {
		fmt.Fprintf(e.Stdout, "skipped  %s: selected but not detected on PATH; install it (%s), then run `carryover refresh`\n", tl.Display, tl.InstallHint)
		// Asked for by name and not set up: a script must notice (exit 1).
		return o.tools == "" || o.dryRun
	}
	if a.Capability.Tool == "" {
		fmt.Fprintf(e.Stdout, "skipped  %s: %s\n", tl.Display, a.Problem)
		return true
	}
	recs[tl.Name] = service.AgentRecord{Version: a.Version, Pointer: a.Capability.NeedsPointer}
	label := tl.Display + " " + a.Version
	if a.Version == "" {
		label = tl.Display
	}
	if a.Capability.Warning != "" {
		fmt.Fprintf(e.Stdout, "warning  %s\n", a.Capability.Warning)
	}
	if len(a.Capability.Hooks()) == 0 {
		fmt.Fprintf(e.Stdout, "ok       %s: no hooks; carryover reads its history and points it at .carryover/handoff.md\n", label)
		return true
	}
	tg := installTarget(e, tl)
	if id := pluginEnabled(tl, tg.Path); id != "" {
		skipForPlugin(e, o, tl, tg, label, id)
		return true
	}
	return wireHooks(e, o, tg, a, label)
}

// skipForPlugin: the plugin runs the same snapshot on the same events;
// wiring stubs too would record and inject everything twice.
func skipForPlugin(e *Env, o installOptions, tl specs.Tool, tg hookconf.Target, label, id string) {
	fmt.Fprintf(e.Stdout, "skipped  %s: the carryover plugin (%s) already wires its hooks; `claude plugin uninstall %s` to let install wire them instead\n", label, id, id)
	if stubs, err := hookconf.Stubs(tg, hookconf.OSFS{}); err == nil && len(stubs) > 0 && !o.dryRun {
		fmt.Fprintf(e.Stdout, "warning  %s also has install's stubs from before; remove them: carryover uninstall --tools %s\n", tg.Path, tl.Name)
	}
}

// wireHooks plans the agent's hooks in tg, shows the diff on --dry-run or
// writes them, and prints the agent's line; false when that failed.
func wireHooks(e *Env, o installOptions, tg hookconf.Target, a AgentStatus, label string) bool {
	plans, err := hookconf.PlanInstall(tg, a.Capability, e.Executable, hookconf.OSFS{})
	if err != nil {
		fmt.Fprintf(e.Stdout, "failed   %s: %v\n", label, err)
		return false
	}
	switch {
	case !showPlans(e, plans, o.dryRun):
		fmt.Fprintf(e.Stdout, "ok       %s: hooks up to date in %s\n", label, tg.Where())
	case o.dryRun:
		fmt.Fprintf(e.Stdout, "would    %s: write %d hooks to %s\n", label, len(plans[0].Hooks), tg.Where())
	default:
		if err := hookconf.Apply(plans, hookconf.OSFS{}); err != nil {
			fmt.Fprintf(e.Stdout, "failed   %s: %v\n", label, err)
			return false
		}
		fmt.Fprintf(e.Stdout, "ok       %s: %d hooks (%s) in %s\n", label, len(plans[0].Hooks), strings.Join(plans[0].Hooks, ", "), tg.Where())
	}
	return true
}

func projectsLine(e *Env, cfg Config) string {
	when := "only in a project where an agent needs it (no working start injection)"
	switch cfg.PointerMode() {
	case "always":
		when = "in every project"
	case "never":
		when = "never"
	}
	return "projects: the handoff lives in <project>/.carryover/ (git-ignored by its own .gitignore; nothing in the home directory); " +
		"a pointer block goes into AGENTS.md " + when + " (`carryover config set pointer never` turns it off; `carryover ignore DIR` leaves a project alone)"
}

func runUninstall(e *Env, tools string, dryRun bool) error {
	tab, err := specs.Load()
	if err != nil {
		return err
	}
	sel := specs.Names()
	if tools != "" {
		if sel, err = parseToolList(tools); err != nil {
			return err
		}
	}
	var failed int
	for _, name := range sel {
		tl, _ := tab.Tool(name)
		if !uninstallAgent(e, tl, dryRun) {
			failed++
		}
	}
	if failed > 0 {
		return exitf(ExitError, "%d agent(s) could not be cleaned up; see the lines above", failed)
	}
	return nil
}

// uninstallAgent removes carryover's hooks of one agent (shows the diff
// on --dry-run) and prints its line; false when that failed.
func uninstallAgent(e *Env, tl specs.Tool, dryRun bool) bool {
	tg := installTarget(e, tl)
	plans, err := hookconf.PlanUninstall(tg, e.Executable, hookconf.OSFS{})
	if err != nil {
		fmt.Fprintf(e.Stdout, "failed   %s: %v\n", tl.Display, err)
		return false
	}
	switch {
	case !showPlans(e, plans, dryRun):
		if !dryRun { // backups and directories an earlier uninstall left
			printCleanup(e, plans, tg)
		}
	case dryRun:
		fmt.Fprintf(e.Stdout, "would    %s: remove carryover's hooks from %s\n", tl.Display, tg.Where())
	default:
		if err := hookconf.Apply(plans, hookconf.OSFS{}); err != nil {
			fmt.Fprintf(e.Stdout, "failed   %s: %v\n", tl.Display, err)
			return false
		}
		fmt.Fprintf(e.Stdout, "removed  %s: hooks removed from %s\n", tl.Display, tg.Where())
		printCleanup(e, plans, tg)
	}
	return true
}

// printCleanup removes the backups and empty directories hook files left.
func printCleanup(e *Env, plans []hookconf.Plan, tg hookconf.Target) {
	for _, n := range hookconf.Cleanup(plans, hookconf.OSFS{}, tg.Record) {
		fmt.Fprintf(e.Stdout, "note     %s\n", n)
	}
}

// showPlans prints the plans' warnings (a hook file of carryover's the
// user edited) and, on --dry-run, the diff of each change; it reports
// whether any plan changes a file.
func showPlans(e *Env, plans []hookconf.Plan, dryRun bool) (changed bool) {
	for _, p := range plans {
		for _, w := range p.Warnings {
			fmt.Fprintf(e.Stdout, "warning  %s\n", w)
		}
		if p.Changed() {
			changed = true
			if dryRun {
				io.WriteString(e.Stdout, hookconf.Diff(p))
			}
		}
	}
	return changed
}

// uninstall --purge: every trace of carryover in the projects the ledger
// knows (publish.Purge), and with --yes the ledger and carryover's home.

func runPurge(e *Env, dryRun, yes bool) error {
	home := e.Home()
	var projects []string
	st, err := service.OpenStore(e.service())
	if err == nil {
		projects, err = st.KnownProjects()
		st.Close()
	}
	if err != nil {
		return exitf(ExitError, "cannot read the ledger %s to find the projects: %v; no project purged", filepath.Join(home, service.LedgerFile), err)
	}
	for _, p := range publish.EditedProjects(home) {
		if !slices.Contains(projects, p) {
			projects = append(projects, p)
		}
	}
	slices.Sort(projects)
	would := ""
	if dryRun {
		would = "would "
	}
	left := 0
	for _, p := range projects {
		left += purgeProject(e, home, p, would, dryRun)
	}
	if yes {
		left += purgeHome(e, home, would)
	} else if !dryRun {
		fmt.Fprintf(e.Stdout, "kept     the ledger and settings in %s (`carryover uninstall --purge --yes` deletes them too)\n", home)
	}
	if left > 0 {
		return exitf(ExitError, "%d file(s) left alone; see the lines above", left)
	}
	return nil
}

// purgeProject removes carryover's traces from p; it returns how many
// files it left alone.
func purgeProject(e *Env, home, p, would string, dryRun bool) (left int) {
	if !isDir(p) {
		return 0 // gone: nothing of carryover's is left there
	}
	tracked := func(path string) bool { return service.Tracker{}.Tracked(p, path) }
	steps := publish.Purge(home, p, tracked, dryRun)
	if len(steps) > 0 {
		fmt.Fprintf(e.Stdout, "project  %s\n", p)
	}
	for _, s := range steps {
		if s.Err != nil {
			left++
			fmt.Fprintf(e.Stdout, "  left alone %s: %v\n", s.Path, s.Err)
		} else {
			fmt.Fprintf(e.Stdout, "  %s%s %s (%s)\n", would, s.Action, s.Path, s.Why)
		}
	}
	return left
}

// homeNames are the files and directories carryover keeps in its home;
// a name starting with one of homePrefixes is carryover's too (the
// ledger's WAL, salvage copies, the rotated log).
var (
	homeNames    = []string{"config.toml", "install.json", service.AgentsFile, "handoff.md", "published", "edits", "run", "recovery.lock", adapters.ListCacheName}
	homePrefixes = []string{service.LedgerFile, "carryover.log"}
)

// removeAll is os.RemoveAll; a test makes it fail.
var removeAll = os.RemoveAll

// purgeHome deletes carryover's files from its home, then the home when
// nothing else is in it; it returns how many it could not delete.
func purgeHome(e *Env, home, would string) (left int) {
	ents, err := os.ReadDir(home)
	if err != nil {
		return 0
	}
	var other []string
	for _, d := range ents {
		n := d.Name()
		ours := slices.Contains(homeNames, n) || strings.Contains(n, ".carryover-tmp-") ||
			slices.ContainsFunc(homePrefixes, func(p string) bool { return strings.HasPrefix(n, p) })
		if !ours {
			other = append(other, n)
			continue
		}
		if would == "" {
			if err := removeAll(filepath.Join(home, n)); err != nil {
				left++
				fmt.Fprintf(e.Stdout, "  left alone %s: %v\n", filepath.Join(home, n), err)
			}
		}
	}
	fmt.Fprintf(e.Stdout, "%sdelete the ledger, settings and records in %s\n", would, home)
	if len(other) > 0 {
		fmt.Fprintf(e.Stdout, "kept     %s: it also holds %s, which is not carryover's\n", home, strings.Join(other, ", "))
	} else if would == "" && publish.Canonical(home) != publish.Canonical(e.UserHome()) {
		_ = os.Remove(home)
	}
	return left
}
