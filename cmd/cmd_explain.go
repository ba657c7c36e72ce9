package cmd

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish/service"
)

func explainCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "explain",
		Usage: "print each line of the project's handoff with its evidence: the rule that chose it and the ledger rows it came from",
		Flags: []cli.Flag{projectFlag, &cli.BoolFlag{Name: "json", Usage: "one JSON document: lines, each with its rule and rows"}},
		Action: func(c *cli.Context) error {
			return runExplain(e, c.String("project"), c.Bool("json"))
		},
	}
}

func runExplain(e *Env, project string, asJSON bool) error {
	r, err := openLifecycle(e, project, false)
	if err != nil {
		return err
	}
	defer r.Close()
	if !r.HasLedger() {
		return exitf(ExitNotFound, "nothing to explain in %s: no agent session recorded for this project yet (run an agent with carryover's hooks installed, or `carryover handoff --transcript FILE`)", r.Root)
	}
	lines, err := r.Explain()
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e.Stdout, struct {
			Project string                `json:"project"`
			Lines   []service.ExplainLine `json:"lines"`
		}{r.Root, lines})
	}
	if len(lines) == 0 {
		fmt.Fprintln(e.Stdout, "the handoff states nothing drawn from the ledger yet")
		return nil
	}
	for _, l := range lines {
		fmt.Fprintf(e.Stdout, "%s: %s\n  rule: %s\n", l.Section, l.Text, l.Rule)
		for _, row := range l.Rows {
			fmt.Fprintf(e.Stdout, "  from %s session %s #%d, %s, %s: %s\n", row.Agent, shortID(row.Session), row.Seq,
				row.Time.Format(time.RFC3339), row.Kind, row.Excerpt)
		}
	}
	return nil
}
