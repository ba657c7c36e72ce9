package cmd

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
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

// install, refresh and uninstall: detect agents, write hook stubs into their configs (specs/hookconf), report each.

// AgentStatus is one agent's detection and hook state: Binary is "" when not detected, VersionFrom a
// specs.Source, Capability zero when not detected or unsupported, Problem a detection or resolution failure.
type AgentStatus struct {
	Tool, Display, Binary, Version, VersionFrom string
	Capability                                  specs.Capability
	Hooks                                       hookconf.Status
	Problem                                     string
}

func (a AgentStatus) Detected() bool { return a.Binary != "" }

// hookCapability is the capability a's hooks are checked against: the detected version's, else the newest row's.
func (a AgentStatus) hookCapability(tab *specs.Table) specs.Capability {
	if a.Capability.Tool != "" {
		return a.Capability
	}
	c, _ := tab.Resolve(a.Tool, "")
	return c
}

func dryRunFlag() cli.Flag {
	return &cli.BoolFlag{Name: "dry-run", Usage: "print the changes as diffs; write nothing"}
}

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
			dryRunFlag(),
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
		Flags: []cli.Flag{dryRunFlag()},
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
			dryRunFlag(),
			&cli.BoolFlag{Name: "purge", Usage: "also take carryover out of every project the ledger knows: .carryover/, pointer blocks, the .gitignore entry (files restored byte for byte)"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "with --purge: also delete the ledger and carryover's home"},
		},
		Action: func(c *cli.Context) error {
			if c.Bool("yes") && !c.Bool("purge") {
				return usageErrorf("carryover uninstall --help", "--yes goes with --purge (it deletes the ledger too)")
			}
			err := runUninstall(e, c.String("tools"), c.Bool("dry-run"))
			if c.Bool("purge") {
				err = cmp.Or(err, runPurge(e, c.Bool("dry-run"), c.Bool("yes")))
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
		go func() { defer wg.Done(); out[i] = detectAgent(e, tab, tl) }()
	}
	wg.Wait()
	return out
}

func detectAgent(e *Env, tab *specs.Table, tl specs.Tool) AgentStatus {
	a := AgentStatus{Tool: tl.Name, Display: tl.Display}
	for _, b := range tl.Binaries {
		if a.Binary = lookPath(e, b); a.Binary != "" {
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
	var err error
	if a.Capability, err = tab.Resolve(tl.Name, a.Version); err != nil { // the zero Capability
		a.Problem = err.Error()
	}
	return a
}

// lookPath searches env's PATH (not the process's) for an executable: the one lookup for every program carryover
// starts (agents, version probes, doctor's shell). Only absolute entries count (absPATH).
func lookPath(e *Env, name string) string {
	exts := []string{""}
	if runtime.GOOS == "windows" {
		exts = []string{".exe", ".cmd", ".bat", ""}
	}
	for _, dir := range filepath.SplitList(absPATH(e)) {
		for _, ext := range exts {
			p := filepath.Join(dir, name+ext)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() && (runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0) {
				return p
			}
		}
	}
	return ""
}

// absPATH is env's PATH without relative entries ("", ".", ./node_modules/.bin): they resolve in the current
// directory, a hostile repository that could plant the `claude` or `node` carryover runs (exec.LookPath's ErrDot).
func absPATH(e *Env) string {
	keep := slices.DeleteFunc(filepath.SplitList(e.Getenv("PATH")), func(d string) bool { return !filepath.IsAbs(d) })
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
		st, err := hookconf.Check(installTarget(e, tl), a.hookCapability(tab), e.Executable, hookconf.OSFS{})
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
		switch t = strings.TrimSpace(t); {
		case t == "" || slices.Contains(out, t):
		case !slices.Contains(specs.Names(), t):
			return nil, exitf(ExitError, "unknown agent %q in --tools; choose from %s", t, strings.Join(specs.Names(), ", "))
		default:
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
	cfg, _ := LoadConfig(e, "")
	agents, sel, remove, err := selectInstall(e, tab, &o, detectAgents(e, tab), cfg)
	if err != nil {
		return err
	}
	if !o.refresh {
		saveInstallChoice(e, sel, o.resume, o.dryRun)
	}
	failed, recs := installSelected(e, o, tab, agents, sel)
	if !o.dryRun && len(recs) > 0 {
		saveAgentRecords(e, recs)
	}
	if !o.refresh {
		fmt.Fprintln(e.Stdout, projectsLine(cfg))
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

// saveInstallChoice saves the agents and resume mode ("" = keep) in config.toml (refresh reads them) and says so;
// failures told. A dry run only says it would.
func saveInstallChoice(e *Env, sel []string, resume string, dryRun bool) {
	if dryRun {
		fmt.Fprintf(e.Stdout, "would    save tools = %s in %s\n", config.Strings(sel), e.ConfigPath())
		return
	}
	if err := config.SetKeyInFile(e.ConfigPath(), "tools", config.Strings(sel), 0o600); err != nil {
		fmt.Fprintf(e.Stderr, "carryover: could not save the selection to %s: %v\n", e.ConfigPath(), err)
	} else {
		fmt.Fprintf(e.Stdout, "saved    tools = %s in %s\n", config.Strings(sel), e.ConfigPath())
	}
	if resume == "" {
		return
	}
	if err := config.SetKeyInFile(e.ConfigPath(), "resume", strconv.Quote(resume), 0o600); err != nil {
		fmt.Fprintf(e.Stderr, "carryover: could not save resume = %q to %s: %v\n", resume, e.ConfigPath(), err)
		return
	}
	fmt.Fprintf(e.Stdout, "resume = %q saved in %s\n", resume, e.ConfigPath())
}

// saveAgentRecords keeps the set-up agents' versions (doctor and refresh compare them); a failure is only told.
func saveAgentRecords(e *Env, recs map[string]service.AgentRecord) {
	if err := service.SaveAgentRecords(e.Home(), recs); err != nil {
		fmt.Fprintf(e.Stderr, "carryover: could not record the agents' versions in %s: %v\n", filepath.Join(e.Home(), service.AgentsFile), err)
	}
}

// selectInstall picks the agents to set up: --tools, the saved selection on refresh, else the detected ones,
// ticked in a menu on a terminal (which may set o.resume, name hooks to remove, and fill agents' hook states).
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

// installSelected sets up every selected agent: how many failed, and the versions set up.
func installSelected(e *Env, o installOptions, tab *specs.Table, agents []AgentStatus, sel []string) (int, map[string]service.AgentRecord) {
	byName, recs := map[string]AgentStatus{}, map[string]service.AgentRecord{}
	for _, a := range agents {
		byName[a.Tool] = a
	}
	return eachAgent(tab, sel, func(tl specs.Tool) bool { return installAgent(e, o, tl, byName[tl.Name], recs) }), recs
}

// eachAgent runs do on every agent sel names; failed counts those it returned false for.
func eachAgent(tab *specs.Table, sel []string, do func(specs.Tool) bool) (failed int) {
	for _, name := range sel {
		if tl, _ := tab.Tool(name); !do(tl) {
			failed++
		}
	}
	return failed
}

// installAgent sets up one selected agent and prints its line; false: a failure (exit 1). recs gets its version.
func installAgent(e *Env, o installOptions, tl specs.Tool, a AgentStatus, recs map[string]service.AgentRecord) bool {
	if !a.Detected() {
		fmt.Fprintf(e.Stdout, "skipped  %s: selected but not detected on PATH; install it (%s), then run `carryover refresh`\n", tl.Display, tl.InstallHint)
		return o.tools == "" || o.dryRun // asked for by name and not set up: a script must notice
	}
	if a.Capability.Tool == "" {
		fmt.Fprintf(e.Stdout, "skipped  %s: %s\n", tl.Display, a.Problem)
		return true
	}
	recs[tl.Name] = service.AgentRecord{Version: a.Version, Pointer: a.Capability.NeedsPointer}
	label := strings.TrimSpace(tl.Display + " " + a.Version)
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
	plans, err := hookconf.PlanInstall(tg, a.Capability, e.Executable, hookconf.OSFS{})
	switch {
	case err != nil:
	case !showPlans(e, plans, o.dryRun):
		fmt.Fprintf(e.Stdout, "ok       %s: hooks up to date in %s\n", label, tg.Where())
	case o.dryRun:
		fmt.Fprintf(e.Stdout, "would    %s: write %d hooks to %s\n", label, len(plans[0].Hooks), tg.Where())
	default:
		if err = hookconf.Apply(plans, hookconf.OSFS{}); err == nil {
			fmt.Fprintf(e.Stdout, "ok       %s: %d hooks (%s) in %s\n", label, len(plans[0].Hooks), strings.Join(plans[0].Hooks, ", "), tg.Where())
		}
	}
	return printFailed(e, label, err)
}

// printFailed prints an agent's failure line; false when there was one.
func printFailed(e *Env, label string, err error) bool {
	if err != nil {
		fmt.Fprintf(e.Stdout, "failed   %s: %v\n", label, err)
	}
	return err == nil
}

// skipForPlugin: the plugin runs the same snapshot on the same events; stubs too would record and inject twice.
func skipForPlugin(e *Env, o installOptions, tl specs.Tool, tg hookconf.Target, label, id string) {
	fmt.Fprintf(e.Stdout, "skipped  %s: the carryover plugin (%s) already wires its hooks; `claude plugin uninstall %s` to let install wire them instead\n", label, id, id)
	if stubs, err := hookconf.Stubs(tg, hookconf.OSFS{}); err == nil && len(stubs) > 0 && !o.dryRun {
		fmt.Fprintf(e.Stdout, "warning  %s also has install's stubs from before; remove them: carryover uninstall --tools %s\n", tg.Path, tl.Name)
	}
}

// pluginEnabled is the id of carryover's plugin when the agent's settings enable it (its descriptor reads them).
func pluginEnabled(tl specs.Tool, settings string) string {
	a, ok := adapters.ByName(tl.Name)
	if !ok || a.PluginEnabled == nil || settings == "" {
		return ""
	}
	if b, err := safefile.ReadFile(settings, 4<<20); err == nil {
		return a.PluginEnabled(b)
	}
	return ""
}

func projectsLine(cfg Config) string {
	when := map[string]string{"always": "in every project", "never": "never"}[cfg.PointerMode()]
	return "projects: the handoff lives in <project>/.carryover/ (git-ignored by its own .gitignore; nothing in the home directory); " +
		"a pointer block goes into AGENTS.md " + cmp.Or(when, "only in a project where an agent needs it (no working start injection)") +
		" (`carryover config set pointer never` turns it off; `carryover ignore DIR` leaves a project alone)"
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
	if failed := eachAgent(tab, sel, func(tl specs.Tool) bool { return uninstallAgent(e, tl, dryRun) }); failed > 0 {
		return exitf(ExitError, "%d agent(s) could not be cleaned up; see the lines above", failed)
	}
	return nil
}

// uninstallAgent removes one agent's hooks (--dry-run: shows the diff), backups and empty directories; false: failed.
func uninstallAgent(e *Env, tl specs.Tool, dryRun bool) bool {
	tg := installTarget(e, tl)
	plans, err := hookconf.PlanUninstall(tg, e.Executable, hookconf.OSFS{})
	switch {
	case err != nil:
	case !showPlans(e, plans, dryRun):
	case dryRun:
		fmt.Fprintf(e.Stdout, "would    %s: remove carryover's hooks from %s\n", tl.Display, tg.Where())
	default:
		if err = hookconf.Apply(plans, hookconf.OSFS{}); err == nil {
			fmt.Fprintf(e.Stdout, "removed  %s: hooks removed from %s\n", tl.Display, tg.Where())
		}
	}
	if err == nil && !dryRun {
		printLines(e.Stdout, "note     ", hookconf.Cleanup(plans, hookconf.OSFS{}, tg.Record)...)
	}
	return printFailed(e, tl.Display, err)
}

// showPlans prints the warnings (a carryover hook file the user edited) and, on dryRun, the diffs; changed: any change.
func showPlans(e *Env, plans []hookconf.Plan, dryRun bool) (changed bool) {
	for _, p := range plans {
		printLines(e.Stdout, "warning  ", p.Warnings...)
		if p.Changed() && dryRun {
			io.WriteString(e.Stdout, hookconf.Diff(p))
		}
		changed = changed || p.Changed()
	}
	return changed
}

// runPurge is uninstall --purge: carryover's traces in every project the ledger knows; --yes: the ledger and home too.
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
	projects = append(projects, publish.EditedProjects(home)...)
	slices.Sort(projects)
	projects = slices.Compact(projects)
	would, left := map[bool]string{true: "would "}[dryRun], 0
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

// purgeProject removes carryover's traces from p; left: how many files it left alone. A project gone has none.
func purgeProject(e *Env, home, p, would string, dryRun bool) (left int) {
	if !isDir(p) {
		return 0
	}
	tr := service.Tracker{} // the index is read once, however many files .carryover/ holds
	steps := publish.Purge(home, p, func(path string) bool { return tr.Tracked(p, path) }, dryRun)
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

// removeAll is os.RemoveAll; a test makes it fail.
var removeAll = os.RemoveAll

// purgeHome deletes carryover's files from its home (names starting with the ledger's or the log's too: WAL,
// salvage copies, rotated log), then the home if nothing else is left; left: how many it could not delete.
func purgeHome(e *Env, home, would string) (left int) {
	ents, err := os.ReadDir(home)
	if err != nil {
		return 0
	}
	names := []string{"config.toml", "install.json", service.AgentsFile, "handoff.md", "published", "edits", "run", "recovery.lock", adapters.ListCacheName}
	var other []string
	for _, d := range ents {
		n := d.Name()
		switch {
		case !slices.Contains(names, n) && !strings.Contains(n, ".carryover-tmp-") && !strings.HasPrefix(n, service.LedgerFile) && !strings.HasPrefix(n, "carryover.log"):
			other = append(other, n)
		case would == "":
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

// chooseInstall asks on a terminal which agents to set up and, unless flagMode (--resume), how the next session opens
// (default: current, config.toml's); it returns them and the unticked agents whose hooks the user chose to remove. The
// lists are checkboxes in raw mode, else numbered lines (numbered): the same questions either way.
func chooseInstall(e *Env, agents []AgentStatus, sel []string, flagMode, current string) ([]string, string, []string, error) {
	def := cmp.Or(flagMode, current)
	if !slices.Contains(config.ResumeModes, def) {
		def = config.ResumeModes[0]
	}
	in, choose := bufio.NewReader(e.Stdin), numbered
	if e.MakeRaw != nil {
		if restore, err := e.MakeRaw(); err == nil {
			defer restore()
			choose = pickList
		}
	}
	tools, mode, remove, err := pickInstall(func(title string, items []pickItem, radio bool) ([]pickItem, error) {
		return choose(in, e.Stdout, title, items, radio)
	}, agents, sel, flagMode, def)
	if errors.Is(err, errPickAborted) {
		return nil, "", nil, exitf(ExitCancelled, "install cancelled; nothing was written")
	}
	return tools, mode, remove, err
}

func hasStubs(a AgentStatus) bool {
	return len(a.Hooks.Hooks) > 0 && a.Hooks.State != hookconf.StateNoHooks
}

func detectedNote(a AgentStatus) string {
	if a.Detected() {
		return strings.TrimSpace(a.Version + " detected")
	}
	return "not detected"
}

// pickInstall asks install's questions through choose (one list each).
func pickInstall(choose func(title string, items []pickItem, radio bool) ([]pickItem, error), agents []AgentStatus, sel []string, flagMode, def string) ([]string, string, []string, error) {
	items := make([]pickItem, len(agents))
	for i, a := range agents {
		items[i] = pickItem{Label: a.Display, Note: detectedNote(a), On: slices.Contains(sel, a.Tool)}
	}
	got, err := choose("Agents to set up", items, false)
	if err != nil {
		return nil, "", nil, err
	}
	var tools, remove []string
	for i, it := range got {
		a := agents[i]
		if it.On {
			tools = append(tools, a.Tool)
			continue
		}
		if !hasStubs(a) {
			continue
		}
		// Unticked, but its hooks from an earlier install would go on running: offer to remove them.
		ans, err := choose(a.Display+" is unticked; its carryover hooks in "+a.Hooks.Path+" stay unless removed", []pickItem{
			{Label: "keep them", Note: "they go on recording " + a.Display + "'s sessions and handing off", On: true},
			{Label: "remove them", Note: "as `carryover uninstall --tools " + a.Tool + "` does"},
		}, true)
		if err != nil {
			return nil, "", nil, err
		} else if ans[1].On {
			remove = append(remove, a.Tool)
		}
	}
	if flagMode != "" {
		return tools, flagMode, remove, nil
	}
	modes := make([]pickItem, len(config.ResumeModes))
	for i, m := range config.ResumeModes {
		modes[i] = pickItem{Label: m, Note: resumeNotes[m], On: m == def}
	}
	got, err = choose("When a new session starts with a handoff", modes, true)
	if i := slices.IndexFunc(got, func(it pickItem) bool { return it.On }); err == nil && i >= 0 {
		return tools, config.ResumeModes[i], remove, nil
	}
	return nil, "", nil, err
}

var resumeNotes = map[string]string{
	"ask":    "the agent summarises the task and next step, then asks whether to continue",
	"brief":  "one line on the task and next step, then it carries on",
	"silent": "the agent uses the handoff without mentioning it",
}

// numbered is pickList for a terminal without raw mode, one line at a time: a checkbox list is toggled by number until
// an empty line; a radio list asks for one label (Enter or the end of input keeps the one on).
func numbered(r io.Reader, w io.Writer, title string, items []pickItem, radio bool) ([]pickItem, error) {
	in, items, labels := bufio.NewReader(r), slices.Clone(items), []string{} // r itself when it is one (consecutive lists share it)
	for _, it := range items {
		labels = append(labels, it.Label)
	}
	if radio {
		on := max(0, slices.IndexFunc(items, func(it pickItem) bool { return it.On }))
		fmt.Fprintf(w, "%s: %s or %s? [%s]: ", title, strings.Join(labels[:len(labels)-1], ", "), labels[len(labels)-1], labels[on])
	} else {
		fmt.Fprintln(w, title+":")
		for i, it := range items {
			fmt.Fprintf(w, "  %d %s %s %s\n", i+1, map[bool]string{false: "[ ]", true: "[x]"}[it.On], it.Label, it.Note)
		}
		fmt.Fprint(w, "Toggle by number (e.g. 1 3), Enter to continue: ")
	}
	line, err := in.ReadString('\n')
	switch line = strings.TrimSpace(line); {
	case line == "":
		return items, nil
	case !radio:
		toggle(w, line, items)
	case slices.Contains(labels, strings.ToLower(line)):
		for i := range items {
			items[i].On = items[i].Label == strings.ToLower(line)
		}
		return items, nil
	default:
		fmt.Fprintf(w, "%q is not one of %s\n", strings.ToLower(line), strings.Join(labels, ", "))
	}
	if err != nil {
		return items, nil
	}
	return numbered(in, w, title, items, radio)
}

// toggle flips the items whose numbers line holds (space or comma apart).
func toggle(w io.Writer, line string, items []pickItem) {
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' }) {
		if n, err := strconv.Atoi(f); err != nil || n < 1 || n > len(items) {
			fmt.Fprintf(w, "ignored %q: not a number between 1 and %d\n", f, len(items))
		} else {
			items[n-1].On = !items[n-1].On
		}
	}
}
