package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/service"
)

func decideCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "decide",
		Usage:     "record a decision every later handoff of the project shows (\"do not re-debate\")",
		ArgsUsage: `"<decision>"`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "why", Usage: "the reason, shown with the decision"},
			&cli.BoolFlag{Name: "list", Usage: "list the project's live decisions with their ids"},
			&cli.StringFlag{Name: "drop", Usage: "drop the decision with this `ID` (or a unique prefix of it; see --list)"},
			&cli.BoolFlag{Name: "json", Usage: "with --list: machine-readable output"},
			projectFlag,
		},
		Action: func(c *cli.Context) error {
			args, late := trailingFlags(c.Args().Slice(), "why", "project")
			o := decideOptions{project: c.String("project"), text: strings.Join(args, " "), why: c.String("why"),
				list: c.Bool("list"), drop: c.String("drop"), dropSet: c.IsSet("drop"), json: c.Bool("json")}
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
	drop               string
	dropSet            bool
}

// DecisionReport is one element of `decide --list --json`'s decisions.
type DecisionReport struct {
	ID     string `json:"id"`
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
		return usageErrorf("carryover decide --help", `decide takes one of: "<decision>" [--why "…"], --list, --drop ID`)
	}
	r, err := openLifecycle(e, o.project, !o.list)
	if err != nil {
		return err
	}
	defer r.Close()
	ds, err := r.Decisions()
	switch {
	case err != nil:
		return err
	case o.list:
		return listDecisions(e, r.Root, ds, o.json)
	case o.dropSet:
		return dropDecision(e, r, ds, o.drop)
	}
	text := strings.Join(strings.Fields(o.text), " ")
	if err := r.Decide(text, strings.TrimSpace(o.why)); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "decided: %s\n", text)
	republish(e, r)
	return nil
}

// listDecisions prints the project's decisions log (decide --list).
func listDecisions(e *Env, project string, ds []service.Decision, asJSON bool) error {
	if asJSON {
		out := []DecisionReport{}
		for _, d := range ds {
			source := "extracted"
			if d.User {
				source = "user"
			}
			out = append(out, DecisionReport{ID: d.ID, Text: d.Text, Why: d.Why, Source: source, At: d.At.UTC().Format("2006-01-02T15:04:05Z")})
		}
		return printJSON(e.Stdout, struct {
			Project   string           `json:"project"`
			Decisions []DecisionReport `json:"decisions"`
		}{project, out})
	}
	if len(ds) == 0 {
		fmt.Fprintf(e.Stdout, "no decisions recorded for %s (add one: carryover decide \"…\" --why \"…\")\n", project)
	}
	for _, d := range ds {
		who := "you"
		if !d.User {
			who = "extracted"
		}
		line := fmt.Sprintf("%s  %s", d.ID, d.Text)
		if d.Why != "" {
			line += " (why: " + d.Why + ")"
		}
		fmt.Fprintf(e.Stdout, "%s  [%s, %s]\n", line, who, publish.Ago(e.Now(), d.At))
	}
	return nil
}

// dropDecision drops the decision whose id (or a prefix of it) is arg.
func dropDecision(e *Env, r *service.Project, ds []service.Decision, arg string) error {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	want := strings.ToLower(strings.TrimSpace(arg))
	if !strings.HasPrefix(want, "d-") {
		want = "d-" + want
	}
	id, ok, near := publish.MatchID(ids, want)
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
	fmt.Fprintf(e.Stdout, "dropped: %s\n", d.Text)
	republish(e, r)
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
