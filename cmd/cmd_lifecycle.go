package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/lifecycle"
	"github.com/carryover/carryover/publish/service"
)

// onProject runs fn on the project's ledger for a lifecycle command; create: a missing ledger may be made (to record).
func onProject(e *Env, project string, create bool, fn func(*service.Project) error) error {
	root, err := currentProject(e, project)
	if err != nil {
		return err
	}
	p, err := service.OpenLedger(e.service(), root, create)
	if err != nil {
		return err
	}
	defer p.Close()
	return fn(p)
}

// recorded says what was recorded and publishes the handoff, best effort (the project is marked: the next hook does).
func recorded(e *Env, p *service.Project, format string, args ...any) error {
	fmt.Fprintf(e.Stdout, format, args...)
	if err := p.Publish(); err != nil {
		fmt.Fprintf(e.Stderr, "carryover: the handoff is updated at the next agent event (%v)\n", err)
	}
	return nil
}

// oneText is a command's free-text argument with its whitespace collapsed.
func oneText(c *cli.Context) string {
	return strings.Join(strings.Fields(strings.Join(c.Args().Slice(), " ")), " ")
}

func clearCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "clear",
		Usage: "retire the project's current handoff: new sessions start without it (history keeps it)",
		Flags: []cli.Flag{projectFlag},
		Action: func(c *cli.Context) error {
			return onProject(e, c.String("project"), false, func(p *service.Project) error {
				id, already, err := p.Clear()
				switch {
				case errors.Is(err, lifecycle.ErrNoHistory):
					return exitf(ExitNotFound, "nothing to clear in %s: %v", p.Root, err)
				case err != nil:
					return err
				case already:
					fmt.Fprintf(e.Stdout, "%s was already cleared\n", id)
				default:
					fmt.Fprintf(e.Stdout, "cleared %s: new sessions start without it (`carryover history show %s` still prints it)\n", id, id)
				}
				return nil
			})
		},
	}
}

func taskCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "task",
		Usage:     "pin the project's current task: every handoff leads with it, before the goal carryover extracted",
		ArgsUsage: `["<task>"]`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "done", Usage: "the pinned task is finished: unpin it"},
			&cli.BoolFlag{Name: "clear", Usage: "unpin the task"},
			jsonFlag("machine-readable output"),
			projectFlag,
		},
		Action: func(c *cli.Context) error { return runTask(e, c) },
	}
}

// TaskReport is `carryover task --json`.
type TaskReport struct {
	Project string `json:"project"`
	Task    string `json:"task"` // "" when none is pinned
	SetBy   string `json:"set_by,omitempty"`
	At      string `json:"at,omitempty"`
}

func runTask(e *Env, c *cli.Context) error {
	text := oneText(c)
	done, unpin := c.Bool("done"), c.Bool("done") || c.Bool("clear")
	if (done && c.Bool("clear")) || (unpin && text != "") {
		return usageErrorf("carryover task --help", `task takes one of: "<task>", --done, --clear (or nothing, to show it)`)
	}
	return onProject(e, c.String("project"), text != "" || unpin, func(r *service.Project) error {
		switch {
		case unpin:
			return unpinTask(e, r, done)
		case text != "":
			if err := r.PinTask(text); err != nil {
				return err
			}
			return recorded(e, r, "task pinned: %s\n", text)
		}
		return showTask(e, r, c.Bool("json"))
	})
}

// unpinTask is task --done (done) and --clear.
func unpinTask(e *Env, r *service.Project, done bool) error {
	t, ok, err := r.UnpinTask()
	if err != nil {
		return err
	} else if !ok {
		return exitf(ExitNotFound, "no task pinned for %s", r.Root)
	}
	return recorded(e, r, "task %s: %s\n", map[bool]string{false: "cleared", true: "done"}[done], t.Text)
}

// showTask prints the project's pinned task.
func showTask(e *Env, r *service.Project, asJSON bool) error {
	rep := TaskReport{Project: r.Root}
	t, ok := r.Task()
	if ok {
		rep.Task, rep.SetBy, rep.At = t.Text, "user", t.At.UTC().Format("2006-01-02T15:04:05Z")
	}
	switch {
	case asJSON:
		return printJSON(e.Stdout, rep)
	case ok:
		fmt.Fprintf(e.Stdout, "%s  (pinned by you %s)\n", t.Text, publish.Ago(e.Now(), t.At))
	default:
		fmt.Fprintf(e.Stdout, "no task pinned for %s (pin one: carryover task \"…\")\n", r.Root)
	}
	return nil
}

func decideCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "decide",
		Usage:     "record a decision every later handoff of the project shows (\"do not re-debate\")",
		ArgsUsage: `"<decision>"`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "why", Usage: "the reason, shown with the decision"},
			&cli.BoolFlag{Name: "list", Usage: "list the project's live decisions with their ids"},
			&cli.StringFlag{Name: "drop", Usage: "drop the decision with this `ID` (or a unique prefix of it; see --list)"},
			jsonFlag("with --list: machine-readable output"),
			projectFlag,
		},
		Action: func(c *cli.Context) error { return runDecide(e, c) },
	}
}

// DecisionReport is one element of `decide --list --json`'s decisions.
type DecisionReport struct {
	ID     string `json:"id"`
	Text   string `json:"text"`
	Why    string `json:"why,omitempty"`
	Source string `json:"source"` // user or extracted
	At     string `json:"at"`
}

func runDecide(e *Env, c *cli.Context) error {
	text := oneText(c)
	list, drop := c.Bool("list"), c.IsSet("drop")
	if modes := len(slices.DeleteFunc([]bool{list, drop, text != ""}, func(b bool) bool { return !b })); modes != 1 {
		return usageErrorf("carryover decide --help", `decide takes one of: "<decision>" [--why "…"], --list, --drop ID`)
	}
	return onProject(e, c.String("project"), !list, func(r *service.Project) error {
		ds, err := r.Decisions()
		switch {
		case err != nil:
			return err
		case list:
			return listDecisions(e, r.Root, ds, c.Bool("json"))
		case drop:
			return dropDecision(e, r, ds, c.String("drop"))
		}
		if err := r.Decide(text, strings.TrimSpace(c.String("why"))); err != nil {
			return err
		}
		return recorded(e, r, "decided: %s\n", text)
	})
}

// listDecisions prints the project's decisions log (decide --list).
func listDecisions(e *Env, project string, ds []service.Decision, asJSON bool) error {
	out := publish.Map(ds, func(d service.Decision) DecisionReport {
		source := map[bool]string{false: "extracted", true: "user"}[d.User]
		return DecisionReport{ID: d.ID, Text: d.Text, Why: d.Why, Source: source, At: d.At.UTC().Format("2006-01-02T15:04:05Z")}
	})
	return output(e, asJSON, struct {
		Project   string           `json:"project"`
		Decisions []DecisionReport `json:"decisions"`
	}{project, nonNil(out)}, func() {
		for _, d := range ds {
			line := fmt.Sprintf("%s  %s", d.ID, d.Text)
			if d.Why != "" {
				line += " (why: " + d.Why + ")"
			}
			fmt.Fprintf(e.Stdout, "%s  [%s, %s]\n", line, map[bool]string{false: "extracted", true: "you"}[d.User], publish.Ago(e.Now(), d.At))
		}
		if len(ds) == 0 {
			fmt.Fprintf(e.Stdout, "no decisions recorded for %s (add one: carryover decide \"…\" --why \"…\")\n", project)
		}
	})
}

// dropDecision drops the decision whose id (or a prefix of it) is arg.
func dropDecision(e *Env, r *service.Project, ds []service.Decision, arg string) error {
	ids := publish.Map(ds, func(d service.Decision) string { return d.ID })
	id, ok, near := publish.MatchID(ids, "d-"+strings.TrimPrefix(strings.ToLower(strings.TrimSpace(arg)), "d-"))
	if !ok || len(ds) == 0 {
		hint := "the log is empty"
		if near != "" {
			hint = "closest: " + near
		}
		return exitf(ExitNotFound, "no decision %q in the log of %s; %s (see `carryover decide --list`)", arg, r.Root, hint)
	}
	d := ds[slices.Index(ids, id)]
	if err := r.DropDecision(d.Text); err != nil {
		return err
	}
	return recorded(e, r, "dropped: %s\n", d.Text)
}

func historyCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "history",
		Usage: "list the project's previous handoffs (id, age, agent, goal, status, who received it)",
		Flags: []cli.Flag{jsonFlag("machine-readable output"), projectFlag},
		Action: func(c *cli.Context) error {
			return onHistory(e, c, func(r *service.Project, hs []lifecycle.HistoryEntry) error {
				return output(e, c.Bool("json"), struct {
					Project  string                   `json:"project"`
					Handoffs []lifecycle.HistoryEntry `json:"handoffs"`
				}{r.Root, nonNil(hs)}, func() { printHistory(plainEnv(e), r.Root, hs) })
			})
		},
		Subcommands: []*cli.Command{
			{
				Name:      "show",
				Usage:     "print one handoff of the history",
				ArgsUsage: "<id-or-prefix>",
				Flags:     []cli.Flag{projectFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErrorf(helpFor(c), "history show takes one handoff id or a prefix of one (see `carryover history`)")
					}
					// A history file may have been planted in .carryover: its
					// escapes never reach the terminal (nor a pipe).
					return onHistory(e, c, func(r *service.Project, hs []lifecycle.HistoryEntry) error {
						return showHistory(plainEnv(e), r.Root, hs, c.Args().First())
					})
				},
			},
			{
				Name:  "clean",
				Usage: "forget handoffs older than an age",
				Flags: []cli.Flag{&cli.StringFlag{Name: "older-than", Usage: "age, e.g. 30d, 2w, 12h", Required: true},
					&cli.BoolFlag{Name: "dry-run", Usage: "list what would be forgotten; change nothing"}, projectFlag},
				Action: func(c *cli.Context) error {
					return runHistoryClean(e, c.String("project"), c.String("older-than"), c.Bool("dry-run"))
				},
			},
		},
	}
}

// onHistory runs fn over the project's handoff history.
func onHistory(e *Env, c *cli.Context, fn func(*service.Project, []lifecycle.HistoryEntry) error) error {
	return onProject(e, c.String("project"), false, func(r *service.Project) error {
		hs, err := r.History()
		if err != nil {
			return err
		}
		return fn(r, hs)
	})
}

func printHistory(e *Env, root string, hs []lifecycle.HistoryEntry) {
	if len(hs) == 0 { // the one thing that makes a first handoff appear
		fmt.Fprintf(e.Stdout, "no handoffs recorded for %s yet — one is written when an agent session here ends a turn, once its hooks are wired (`carryover install`)\n", root)
	}
	for _, h := range hs {
		line := fmt.Sprintf("%s  %-10s", h.ID, h.Status)
		if h.Agent != "" {
			line += fmt.Sprintf("  %s %s  %s", h.Agent, publish.ShortID(h.Session), h.Age)
		}
		if goal := []rune(strings.Join(strings.Fields(h.Goal), " ")); h.Goal != "" {
			if len(goal) > 60 {
				goal = append(goal[:59], '…')
			}
			line += "  " + string(goal)
		}
		fmt.Fprintln(e.Stdout, line)
		for _, c := range h.ConsumedBy {
			fmt.Fprintf(e.Stdout, "    → received by %s session %s %s\n", c.Agent, publish.ShortID(c.Session), publish.Ago(e.Now(), c.At))
		}
	}
}

func showHistory(e *Env, root string, hs []lifecycle.HistoryEntry, arg string) error {
	if len(hs) == 0 {
		return exitf(ExitNotFound, "no handoff %q: %v", arg, lifecycle.ErrNoHistory)
	}
	ids := publish.Map(hs, func(h lifecycle.HistoryEntry) string { return h.ID })
	id, ok, closest := publish.MatchID(ids, arg)
	if !ok {
		return exitf(ExitNotFound, "no handoff %q in the history of %s; closest: %s (`carryover history` lists them)", arg, root, closest)
	}
	text, err := publish.ReadHistory(root, id)
	if errors.Is(err, fs.ErrNotExist) {
		return exitf(ExitNotFound, "%s is recorded but its text is no longer in .carryover/history (rotated or cleaned)", id)
	} else if err != nil {
		return err
	}
	_, err = fmt.Fprint(e.Stdout, text)
	return err
}

func runHistoryClean(e *Env, project, age string, dryRun bool) error {
	d, err := publish.ParseAge(age)
	if err != nil {
		return exitf(ExitError, "--older-than: %v", err)
	}
	return onProject(e, project, false, func(r *service.Project) error {
		ids, err := r.CleanHistory(d, dryRun)
		if err != nil {
			return err
		}
		if !dryRun {
			fmt.Fprintf(e.Stdout, "removed %d handoff(s) older than %s\n", len(ids), age)
			return nil
		}
		printLines(e.Stdout, "would remove ", ids...)
		fmt.Fprintf(e.Stdout, "would remove %d handoff(s) older than %s (dry run: nothing changed)\n", len(ids), age)
		return nil
	})
}

func explainCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "explain",
		Usage: "print each line of the project's handoff with its evidence: the rule that chose it and the ledger rows it came from",
		Flags: []cli.Flag{projectFlag, jsonFlag("one JSON document: lines, each with its rule and rows")},
		Action: func(c *cli.Context) error {
			return onProject(e, c.String("project"), false, func(r *service.Project) error { return runExplain(e, r, c.Bool("json")) })
		},
	}
}

func runExplain(e *Env, r *service.Project, asJSON bool) error {
	if !r.HasLedger() {
		return exitf(ExitNotFound, "nothing to explain in %s: no agent session recorded for this project yet (run an agent with carryover's hooks installed, or `carryover handoff --transcript FILE`)", r.Root)
	}
	lines, err := r.Explain()
	switch {
	case err != nil:
		return err
	case asJSON:
		return printJSON(e.Stdout, struct {
			Project string                `json:"project"`
			Lines   []service.ExplainLine `json:"lines"`
		}{r.Root, lines})
	case len(lines) == 0:
		fmt.Fprintln(e.Stdout, "the handoff states nothing drawn from the ledger yet")
	}
	for _, l := range lines {
		fmt.Fprintf(e.Stdout, "%s: %s\n  rule: %s\n", l.Section, l.Text, l.Rule)
		for _, row := range l.Rows {
			fmt.Fprintf(e.Stdout, "  from %s session %s #%d, %s, %s: %s\n", row.Agent, publish.ShortID(row.Session), row.Seq,
				row.Time.Format(time.RFC3339), row.Kind, row.Excerpt)
		}
	}
	return nil
}
