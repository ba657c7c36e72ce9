package cmd

import (
	"crypto/sha256"
	"encoding/hex"
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
			for _, d := range ds {
				out = append(out, DecisionReport{ID: decisionID(d.Text), Text: d.Text, Why: d.Why, Source: d.Source, At: d.At.UTC().Format("2006-01-02T15:04:05Z")})
			}
			return printJSON(e.Stdout, struct {
				Project   string           `json:"project"`
				Decisions []DecisionReport `json:"decisions"`
			}{r.project, out})
		}
		if len(ds) == 0 {
			fmt.Fprintf(e.Stdout, "no decisions recorded for %s (add one: carryover decide \"…\" --why \"…\")\n", r.project)
		}
		for _, d := range ds {
			who := "you"
			if d.Source != ledger.DecisionUser {
				who = "extracted"
			}
			line := fmt.Sprintf("%s  %s", decisionID(d.Text), d.Text)
			if d.Why != "" {
				line += " (why: " + d.Why + ")"
			}
			fmt.Fprintf(e.Stdout, "%s  [%s, %s]\n", line, who, publish.Ago(e.Now(), d.At))
		}
		return nil
	case o.dropSet:
		ids := make([]string, len(ds))
		byID := map[string]ledger.Decision{}
		for i, d := range ds {
			ids[i] = decisionID(d.Text)
			byID[ids[i]] = d
		}
		arg := strings.ToLower(strings.TrimSpace(o.drop))
		if !strings.HasPrefix(arg, "d-") {
			arg = "d-" + arg
		}
		id, ok, near := publish.MatchID(ids, arg)
		if !ok || len(ds) == 0 {
			hint := "the log is empty"
			if near != "" {
				hint = "closest: " + near
			}
			return exitf(ExitNotFound, "no decision %q in the log of %s; %s (see `carryover decide --list`)", o.drop, r.project, hint)
		}
		d := byID[id]
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

// decisionID is a decision's stable id: it names the decision's text (a
// project's decisions are unique by text), so it does not shift when an
// older decision is dropped, as a position in the list would.
func decisionID(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "d-" + hex.EncodeToString(sum[:3])
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
