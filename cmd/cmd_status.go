package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish"
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
			st := collectStatus(e)
			ledgerSpace(e, &st, c.Bool("space"))
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
	// Ignored is what the working directory's project config asked for
	// that carryover does not honour (publish.ProjectPolicy).
	Ignored []string `json:"config_ignored,omitempty"`
	// Config lists unknown keys and invalid values in the config files.
	Config []string `json:"config_warnings,omitempty"`
}

// GuestReport is what carryover writes in projects and what the user
// told it to leave alone or forget.
type GuestReport struct {
	Pointer string   `json:"pointer"`
	Ignore  []string `json:"ignore"`
	// Forgotten counts handoff records whose session was forgotten.
	Forgotten int `json:"forgotten_handoffs"`
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
	// Restore says how the handoff reaches an agent that cannot be told
	// at session start (specs.Capability.StartInjection).
	Restore string `json:"restore,omitempty"`
	// Read is what reading its most recent sessions found (issue 12:
	// unreadable is not empty; drift names a newer format).
	Read *adapters.Survey `json:"read,omitempty"`
}

// LedgerReport describes the ledger file.
type LedgerReport struct {
	Path     string         `json:"path"`
	Exists   bool           `json:"exists"`
	Bytes    int64          `json:"bytes"`
	Sessions int            `json:"sessions"`
	Rows     int            `json:"rows"`
	ByTool   map[string]int `json:"sessions_by_tool,omitempty"`
	// Space is what takes the room (per project; per table with --space).
	Space *service.Space `json:"space,omitempty"`
}

// ProjectReport is a project's current handoff and its delivery
// receipts; ReceiptReport one receipt.
type (
	ProjectReport = service.ProjectStatus
	ReceiptReport = service.Receipt
)

func collectStatus(e *Env) (st StatusReport) {
	st = StatusReport{Home: e.Home(), Walls: wallsConfig(e)}
	defer func() { st.Config = configWarnings(e, statusProjects(e, st)) }()
	cwdProject, _ := currentProject(e, "")
	gcfg, _ := LoadConfig(e, cwdProject)
	st.Guest = GuestReport{Pointer: gcfg.PointerMode(), Ignore: append([]string{}, gcfg.Ignore...)}
	if cwdProject != "" {
		st.Ignored = gcfg.Ignored
	}
	for _, a := range agentStatus(e) {
		r := AgentReport{Tool: a.Tool, Display: a.Display, Detected: a.Detected(), Binary: a.Binary, Version: a.Version,
			SpecRow: a.Capability.Row, Fallback: a.Capability.Fallback, Warning: a.Capability.Warning,
			ConfigPath: a.Hooks.Path, Hooks: string(a.Hooks.State), HookDetail: a.Hooks.Detail, Events: a.Hooks.Hooks, Problem: a.Problem}
		if a.Detected() && a.Capability.Tool != "" && !a.Capability.StartInjection {
			r.Restore = restoreLine(a.Display, st.Guest.Pointer)
		}
		if sv := adapters.SurveyRecent(a.Tool, adapterEnv(e), 5); sv.Sessions+sv.Unread > 0 {
			r.Read = &sv
		}
		st.Agents = append(st.Agents, r)
	}
	path := filepath.Join(e.Home(), service.LedgerFile)
	st.Ledger.Path = path
	if fi, err := os.Stat(path); err == nil {
		st.Ledger.Exists, st.Ledger.Bytes = true, fi.Size()
	}
	if wal, err := os.Stat(path + "-wal"); err == nil && st.Ledger.Exists {
		st.Ledger.Bytes += wal.Size()
	}
	// No ledger yet: status stays read-only and does not create one.
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
	return st
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
	for _, s := range []string{a.HookDetail, a.Warning, a.Problem, a.Restore} {
		if s != "" {
			fmt.Fprintf(w, "      %s\n", s)
		}
	}
	printSurvey(w, a.Read)
}

// printLedger prints the ledger's size, sessions by agent and rows.
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

// printProjectStatus prints a project's current handoff, its lifecycle and
// who received it.
func printProjectStatus(e *Env, p ProjectReport) {
	w := e.Stdout
	if p.Header == "" {
		fmt.Fprintf(w, "  %s\n    %s\n", p.Project, p.NotInjected)
		return
	}
	fmt.Fprintf(w, "  %s\n    %s (%s)\n", p.Project, strings.TrimPrefix(p.Header, "# "), publish.Ago(e.Now(), p.Written))
	for _, s := range []string{p.Quality, p.NotInjected} {
		if s != "" {
			fmt.Fprintf(w, "    %s\n", s)
		}
	}
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
		fmt.Fprintf(w, "    → %s session %s received %s (%s, %s)\n", r.Tool, shortID(r.Session), which, r.Via, publish.Ago(e.Now(), r.At))
	}
	if p.Context != "" {
		fmt.Fprintf(w, "    context of its session: %s\n", p.Context)
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
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// printGuest says what carryover writes in projects and how to stop it.
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
