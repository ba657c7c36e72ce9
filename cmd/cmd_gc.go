package cmd

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/service"
)

// The ledger's upkeep: gc and forget. Only this file may call GC: a hook never prunes or vacuums (TestOnlyGCVacuums).

func gcCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "remove the ledger rows of old sessions and give the space back",
		Description: "Removes the rows of sessions last active before --older-than (of --project only, when\n" +
			"set). Never removes handoff records, receipts, decisions (each project's distill state), the\n" +
			"session a project's current handoff came from, or anything of a newer session. The freed\n" +
			"pages go back to the file system by incremental vacuum, 16 MB per step, each step its own\n" +
			"transaction, so a hook that needs the ledger meanwhile waits for one step. A ledger made\n" +
			"before carryover used auto-vacuum keeps them inside (reused by new rows) until one --vacuum\n" +
			"rewrites it with auto-vacuum on (needs free disk space about its size; hooks skip their\n" +
			"update while it runs). Hooks never prune or vacuum.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "older-than", Usage: "age cut-off: 180d, 12w, 720h", Value: "180d"},
			&cli.StringFlag{Name: "project", Usage: "only this project's sessions"},
			&cli.BoolFlag{Name: "dry-run", Usage: "say what would be removed"},
			&cli.BoolFlag{Name: "vacuum", Usage: "then rewrite the ledger: all free space back at once, and auto-vacuum on for a ledger made before it"},
			jsonFlag("print JSON"),
		},
		Action: func(c *cli.Context) error {
			return runGC(e, c.String("older-than"), c.String("project"), c.Bool("dry-run"), c.Bool("vacuum"), c.Bool("json"))
		},
	}
}

// gcJSON is `gc --json` (service.GCResult in the --json contract).
type gcJSON struct {
	DryRun     bool  `json:"dry_run"`
	Sessions   int   `json:"sessions"` // sessions whose rows were (or would be) removed
	Rows       int64 `json:"rows"`
	Kept       int   `json:"kept"` // old sessions kept for a current or waiting handoff
	FreedBytes int64 `json:"freed_bytes"`
	FreeBytes  int64 `json:"free_bytes"`
	AutoVacuum bool  `json:"auto_vacuum"`
}

func runGC(e *Env, olderThan, project string, dryRun, vacuum, asJSON bool) error {
	age, err := publish.ParseAge(olderThan)
	if err != nil {
		return exitf(ExitError, "--older-than: %v", err)
	}
	if project != "" {
		if project, err = currentProject(e, project); err != nil {
			return err
		}
	}
	st, err := service.OpenStore(e.service())
	if err != nil {
		return err
	}
	defer st.Close()
	var r service.GCResult
	if st.Exists() {
		if r, err = st.GC(e.Now().Add(-age), project, dryRun, vacuum); err != nil {
			return exitf(ExitError, "gc: %v", err)
		}
	}
	switch {
	case asJSON:
		return printJSON(e.Stdout, gcJSON{DryRun: dryRun, Sessions: r.Sessions, Rows: r.Rows, Kept: r.Kept,
			FreedBytes: r.FreedBytes, FreeBytes: r.FreeBytes, AutoVacuum: r.AutoVacuum})
	case !st.Exists():
		fmt.Fprintln(e.Stderr, "carryover: no ledger yet: nothing to remove")
		return nil
	}
	printGC(e, r, olderThan, dryRun)
	return nil
}

func printGC(e *Env, r service.GCResult, olderThan string, dryRun bool) {
	verb := map[bool]string{false: "removed", true: "would remove"}[dryRun]
	fmt.Fprintf(e.Stdout, "%s the rows of %d sessions last active over %s ago (%d rows)\n", verb, r.Sessions, olderThan, r.Rows)
	if r.Kept > 0 {
		fmt.Fprintf(e.Stdout, "kept %d old sessions: a current handoff came from them or waits to be injected\n", r.Kept)
	}
	if !dryRun {
		fmt.Fprintf(e.Stdout, "gave back %s; %s free inside the ledger\n", humanBytes(r.FreedBytes), humanBytes(r.FreeBytes))
	}
	if r.FreeBytes > 0 && !r.AutoVacuum {
		fmt.Fprintln(e.Stdout, "this ledger predates auto-vacuum: the free space is reused by new rows; `carryover gc --vacuum` (once) gives it back and lets later runs do so")
	}
}

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
			if c.NArg() != 1 {
				return usageErrorf("carryover forget --help", "forget takes one session id (see `carryover list`)")
			}
			return runForget(e, c.Args().First(), c.Bool("dry-run"))
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
