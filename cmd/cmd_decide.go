package cmd

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
)

func decideCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "decide",
		Usage:     "record a decision every later handoff of the project shows (\"do not re-debate\")",
		ArgsUsage: `"<decision>"`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "why", Usage: "the reason, shown with the decision"},
			&cli.BoolFlag{Name: "list", Usage: "list the project's live decisions, numbered"},
			&cli.IntFlag{Name: "drop", Usage: "drop decision `N` (its number in --list)"},
			&cli.BoolFlag{Name: "json", Usage: "with --list: machine-readable output"},
			projectFlag,
		},
		Action: func(c *cli.Context) error {
			args, late := trailingFlags(c.Args().Slice(), "why", "project")
			o := decideOptions{project: c.String("project"), text: strings.Join(args, " "), why: c.String("why"),
				list: c.Bool("list"), drop: c.Int("drop"), dropSet: c.IsSet("drop"), json: c.Bool("json")}
			if v, ok := late["why"]; ok {
				o.why = v
			}
			if v, ok := late["project"]; ok {
				o.project = v
			}
			return runDecide(e, o)
		},
	}
}

type decideOptions struct {
	project, text, why string
	list, json         bool
	drop               int
	dropSet            bool
}

// DecisionReport is one line of `decide --list --json`.
type DecisionReport struct {
	N      int    `json:"n"`
	Text   string `json:"text"`
	Why    string `json:"why,omitempty"`
	Source string `json:"source"` // user or extracted
	At     string `json:"at"`
}

func runDecide(e *Env, o decideOptions) error {
	modes := 0
	for _, b := range []bool{o.list, o.dropSet, strings.TrimSpace(o.text) != ""} {
		if b {
			modes++
		}
	}
	if modes != 1 {
		return exitf(ExitError, `decide takes one of: "<decision>" [--why "…"], --list, --drop N`)
	}
	r, err := openLifecycle(e, o.project, !o.list)
	if err != nil {
		return err
	}
	defer r.close()
	var ds []ledger.Decision
	if r.l != nil {
		if ds, err = r.l.Decisions(r.project); err != nil {
			return err
		}
	}
	switch {
	case o.list:
		if o.json {
			out := []DecisionReport{}
			for i, d := range ds {
				out = append(out, DecisionReport{N: i + 1, Text: d.Text, Why: d.Why, Source: d.Source, At: d.At.UTC().Format("2006-01-02T15:04:05Z")})
			}
			return writeJSON(e.Stdout, out)
		}
		if len(ds) == 0 {
			fmt.Fprintf(e.Stdout, "no decisions recorded for %s (add one: carryover decide \"…\" --why \"…\")\n", r.project)
		}
		for i, d := range ds {
			who := "you"
			if d.Source != ledger.DecisionUser {
				who = "extracted"
			}
			line := fmt.Sprintf("%d. %s", i+1, d.Text)
			if d.Why != "" {
				line += " (why: " + d.Why + ")"
			}
			fmt.Fprintf(e.Stdout, "%s  [%s, %s]\n", line, who, publish.Ago(e.Now(), d.At))
		}
		return nil
	case o.dropSet:
		if o.drop < 1 || o.drop > len(ds) {
			return exitf(ExitNotFound, "no decision %d (the log of %s has %d; see `carryover decide --list`)", o.drop, r.project, len(ds))
		}
		d := ds[o.drop-1]
		if err := r.l.DropDecision(r.project, d.Text); err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "dropped: %s\n", d.Text)
		r.republish()
		return nil
	}
	text := strings.Join(strings.Fields(o.text), " ")
	if _, err := r.l.AddDecision(r.project, ledger.Decision{Text: text, Why: strings.TrimSpace(o.why), Source: ledger.DecisionUser, At: e.Now()}); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "decided: %s\n", text)
	r.republish()
	return nil
}

// trailingFlags takes string flags written after the positional argument
// (`decide "…" --why "…"`: urfave/cli stops parsing flags at the first
// argument) out of args.
func trailingFlags(args []string, names ...string) ([]string, map[string]string) {
	late := map[string]string{}
	var rest []string
	for i := 0; i < len(args); i++ {
		a, matched := args[i], false
		for _, n := range names {
			if a == "--"+n && i+1 < len(args) {
				late[n], matched = args[i+1], true
				i++
				break
			}
			if v, ok := strings.CutPrefix(a, "--"+n+"="); ok {
				late[n], matched = v, true
				break
			}
		}
		if !matched {
			rest = append(rest, a)
		}
	}
	return rest, late
}
