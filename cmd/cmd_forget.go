package cmd

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish/service"
)

func forgetCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "forget",
		Usage:     "remove a session from the ledger: its rows, cursors, receipts and the distill state built from it",
		ArgsUsage: "SESSION",
		Description: "SESSION is a session id as `carryover list` shows it (or the start of one). Its handoff records\n" +
			"stay, emptied, and say \"forgotten\"; a project handoff (and its history copy) written from it is\n" +
			"deleted. The ledger is then rewritten so neither its file nor its WAL keeps any of the session's\n" +
			"text. The agent's own transcript is the agent's: carryover does not delete it.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "say what would be removed; remove nothing"},
		},
		Action: func(c *cli.Context) error {
			args, late := trailingBools(c.Args().Slice(), "dry-run")
			if len(args) != 1 {
				return usageErrorf("carryover forget --help", "forget takes one session id (see `carryover list`)")
			}
			return runForget(e, args[0], c.Bool("dry-run") || late["dry-run"])
		},
	}
}

func runForget(e *Env, id string, dryRun bool) error {
	st, err := service.OpenStore(e.service())
	if err != nil {
		return err
	}
	defer st.Close()
	return exitErr(st.Forget(id, dryRun, e.Stdout, e.Stderr))
}

// trailingBools takes boolean flags written after the positional argument
// (`forget ID --dry-run`: urfave/cli stops parsing flags at the first
// argument) out of args.
func trailingBools(args []string, names ...string) ([]string, map[string]bool) {
	late := map[string]bool{}
	var rest []string
	for _, a := range args {
		if n, ok := strings.CutPrefix(a, "--"); ok && slices.Contains(names, n) {
			late[n] = true
			continue
		}
		rest = append(rest, a)
	}
	return rest, late
}
