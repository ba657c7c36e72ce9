package cmd

import (
	"runtime/debug"
	"strings"

	"github.com/carryover/carryover/adapters"
	"github.com/urfave/cli/v2"
)

// snapshotHeap bounds the hook process's Go heap. Below it the collector
// does not run at all: an incremental snapshot finishes before it would
// matter, and a cold ingest of a huge transcript spends its CPU on parsing
// and SQLite instead of on collections that free little (batches are
// reused). Peak RSS stays well under 64 MB (BenchmarkColdIngest).
const snapshotHeap = 40 << 20

func snapshotCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "snapshot",
		Usage: "record a hook event (run by agent hooks; reads the hook JSON on stdin)",
		Description: "Tails the agent's transcript into the ledger, refreshes .carryover/handoff.md and, on\n" +
			"session start, prints the handoff in the agent's injection envelope. It always exits 0;\n" +
			"problems go to $CARRYOVER_HOME/carryover.log.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tool", Usage: "agent: " + strings.Join(adapters.Names(), ", ")},
			&cli.StringFlag{Name: "event", Usage: "the agent's native hook event name"},
		},
		Action: func(c *cli.Context) error {
			ignoreBrokenPipe()
			debug.SetGCPercent(-1)
			debug.SetMemoryLimit(snapshotHeap)
			Snapshot(e, c.String("tool"), c.String("event"))
			return nil
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			// Never break the agent, even on a bad stub.
			newLogger(e).Printf("snapshot: bad arguments: %v", err)
			return nil
		},
	}
}
