package cmd

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
)

func clearCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "clear",
		Usage: "retire the project's current handoff: new sessions start without it (history keeps it)",
		Flags: []cli.Flag{projectFlag},
		Action: func(c *cli.Context) error {
			return runClear(e, c.String("project"))
		},
	}
}

func runClear(e *Env, project string) error {
	r, err := openLifecycle(e, project, false)
	if err != nil {
		return err
	}
	defer r.close()
	if r.l == nil {
		return exitf(ExitNotFound, "nothing to clear in %s: %v", r.project, publish.ErrNoHistory)
	}
	recs, err := r.l.HandoffRecords(r.project, 1)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return exitf(ExitNotFound, "nothing to clear in %s: %v", r.project, publish.ErrNoHistory)
	}
	if recs[0].Ended == ledger.EndCleared {
		fmt.Fprintf(e.Stdout, "%s was already cleared\n", recs[0].ID)
		return nil
	}
	if err := r.proj.Clear(r.l, recs[0]); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "cleared %s: new sessions start without it (`carryover history show %s` still prints it)\n", recs[0].ID, recs[0].ID)
	return nil
}
