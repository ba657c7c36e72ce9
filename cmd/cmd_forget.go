package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
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
	if !fileExists(filepath.Join(e.Home(), ledger.FileName)) {
		return exitf(ExitNotFound, "no session %q: there is no ledger yet (%s)", id, filepath.Join(e.Home(), ledger.FileName))
	}
	l, err := ledger.Open(e.Home())
	if err != nil {
		return err
	}
	defer l.Close()
	ss, err := l.FindSessions(id)
	if err != nil {
		return err
	}
	if len(ss) == 0 {
		return exitf(ExitNotFound, "no session %q in the ledger (`carryover list --all` shows the sessions)", id)
	}
	if natives := distinctNatives(ss); len(natives) > 1 {
		return exitf(ExitError, "%q starts %d session ids (%s…); give more of it", id, len(natives), natives[0])
	}
	for _, s := range ss {
		f, err := l.ForgetPlan(s)
		if err != nil {
			return err
		}
		recs, _ := l.HandoffRecords(s.Project, -1)
		var ids []string
		current := false
		for _, r := range recs {
			if r.SessionID == s.ID {
				ids = append(ids, r.ID)
				if b, err := publish.ReadHandoffFile(s.Project); err == nil && publish.IDOf(publish.HeaderOf(string(b))) == r.ID {
					current = true
				}
			}
		}
		all := slices.Clone(ids)
		held, _ := publish.HistoryIDs(s.Project)
		ids = slices.DeleteFunc(ids, func(id string) bool { return !slices.Contains(held, id) })
		verb := "forgot"
		if dryRun {
			verb = "would forget"
		}
		fmt.Fprintf(e.Stdout, "%s %s session %s in %s: %d rows, %d cursors; %d handoff records marked forgotten\n",
			verb, s.Tool, s.NativeID, s.Project, f.Rows, f.Cursors, f.Handoffs)
		if current {
			p := publish.HandoffPath(s.Project)
			if dryRun {
				fmt.Fprintf(e.Stdout, "would delete %s\n", p)
			} else if err := publish.RemoveOwnFile(s.Project, filepath.Base(p)); err == nil {
				fmt.Fprintf(e.Stdout, "deleted %s\n", p)
			} else if !errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(e.Stderr, "carryover: could not delete %s: %v\n", p, err)
			}
		}
		if b, err := os.ReadFile(filepath.Join(e.Home(), "handoff.md")); err == nil && slices.Contains(all, publish.IDOf(publish.HeaderOf(string(b)))) {
			p := filepath.Join(e.Home(), "handoff.md") // the global copy of the last handoff
			if dryRun {
				fmt.Fprintf(e.Stdout, "would delete %s\n", p)
			} else if err := os.Remove(p); err == nil {
				fmt.Fprintf(e.Stdout, "deleted %s\n", p)
			}
		}
		if len(ids) > 0 {
			where := filepath.Join(publish.Dir(s.Project), publish.HistoryDir)
			if dryRun {
				fmt.Fprintf(e.Stdout, "would delete %d handoff(s) from %s\n", len(ids), where)
			} else if err := publish.RemoveHistory(s.Project, ids); err != nil {
				fmt.Fprintf(e.Stderr, "carryover: could not delete its handoffs from %s: %v\n", where, err)
			} else {
				fmt.Fprintf(e.Stdout, "deleted %d handoff(s) from %s\n", len(ids), where)
			}
		}
		if dryRun {
			continue
		}
		if err := l.Forget(s); err != nil {
			return exitf(ExitError, "%v (nothing of the session was removed; try again when no agent is running)", err)
		}
		forgetListed(e, s.NativeID, s.Transcript)
	}
	return nil
}

func distinctNatives(ss []ledger.Session) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s.NativeID] {
			seen[s.NativeID] = true
			out = append(out, s.NativeID)
		}
	}
	return out
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
