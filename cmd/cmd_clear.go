package cmd

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish/lifecycle"
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
	p, err := openLifecycle(e, project, false)
	if err != nil {
		return err
	}
	defer p.Close()
	id, already, err := p.Clear()
	switch {
	case errors.Is(err, lifecycle.ErrNoHistory):
		return exitf(ExitNotFound, "nothing to clear in %s: %v", p.Root, err)
	case err != nil:
		return err
	case already:
		fmt.Fprintf(e.Stdout, "%s was already cleared\n", id)
		return nil
	}
	fmt.Fprintf(e.Stdout, "cleared %s: new sessions start without it (`carryover history show %s` still prints it)\n", id, id)
	return nil
}
