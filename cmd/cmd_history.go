package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/lifecycle"
	"github.com/carryover/carryover/publish/service"
)

func historyCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "history",
		Usage: "list the project's previous handoffs (id, age, agent, goal, status, who received it)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "machine-readable output"}, projectFlag},
		Action: func(c *cli.Context) error {
			if c.Bool("json") {
				return runHistory(e, c.String("project"), true)
			}
			return runHistory(plainEnv(e), c.String("project"), false)
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
					// A history file may have been planted in .carryover:
					// its escapes never reach the terminal (nor a pipe).
					return runHistoryShow(plainEnv(e), c.String("project"), c.Args().First())
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

func runHistory(e *Env, project string, asJSON bool) error {
	r, hs, err := loadHistory(e, project)
	if err != nil {
		return err
	}
	defer r.Close()
	if asJSON {
		return printJSON(e.Stdout, struct {
			Project  string                   `json:"project"`
			Handoffs []lifecycle.HistoryEntry `json:"handoffs"`
		}{r.Root, nonNil(hs)})
	}
	if len(hs) == 0 {
		// The one thing that makes a first handoff appear.
		fmt.Fprintf(e.Stdout, "no handoffs recorded for %s yet — one is written when an agent session here ends a turn, once its hooks are wired (`carryover install`)\n", r.Root)
		return nil
	}
	for _, h := range hs {
		line := fmt.Sprintf("%s  %-10s", h.ID, h.Status)
		if h.Agent != "" {
			line += fmt.Sprintf("  %s %s  %s", h.Agent, shortID(h.Session), h.Age)
		}
		if h.Goal != "" {
			line += "  " + clipLine(h.Goal, 60)
		}
		fmt.Fprintln(e.Stdout, line)
		for _, c := range h.ConsumedBy {
			fmt.Fprintf(e.Stdout, "    → received by %s session %s %s\n", c.Agent, shortID(c.Session), publish.Ago(e.Now(), c.At))
		}
	}
	return nil
}

func runHistoryShow(e *Env, project, arg string) error {
	r, hs, err := loadHistory(e, project)
	if err != nil {
		return err
	}
	defer r.Close()
	if len(hs) == 0 {
		return exitf(ExitNotFound, "no handoff %q: %v", arg, lifecycle.ErrNoHistory)
	}
	ids := make([]string, len(hs))
	for i, h := range hs {
		ids[i] = h.ID
	}
	id, ok, closest := publish.MatchID(ids, arg)
	if !ok {
		return exitf(ExitNotFound, "no handoff %q in the history of %s; closest: %s (`carryover history` lists them)", arg, r.Root, closest)
	}
	text, err := publish.ReadHistory(r.Root, id)
	if errors.Is(err, fs.ErrNotExist) {
		return exitf(ExitNotFound, "%s is recorded but its text is no longer in .carryover/history (rotated or cleaned)", id)
	}
	if err != nil {
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
	r, err := openLifecycle(e, project, false)
	if err != nil {
		return err
	}
	defer r.Close()
	if dryRun {
		ids, err := r.StaleHistory(d)
		if err != nil {
			return err
		}
		for _, id := range ids {
			fmt.Fprintf(e.Stdout, "would remove %s\n", id)
		}
		fmt.Fprintf(e.Stdout, "would remove %d handoff(s) older than %s (dry run: nothing changed)\n", len(ids), age)
		return nil
	}
	ids, err := r.CleanHistory(d)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "removed %d handoff(s) older than %s\n", len(ids), age)
	return nil
}

func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// loadHistory opens the project's ledger and lists its handoffs; the
// caller closes r when err is nil.
func loadHistory(e *Env, project string) (*service.Project, []lifecycle.HistoryEntry, error) {
	r, err := openLifecycle(e, project, false)
	if err != nil {
		return nil, nil, err
	}
	hs, err := r.History()
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	return r, hs, nil
}
