package service

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
)

// NotFound is a session, handoff or decision that matches nothing (cmd's
// exit code 2).
type NotFound struct{ error }

func (n NotFound) Unwrap() error { return n.error }

// Forget removes a session (an id or a unique prefix of one) from the
// ledger, with its handoff records marked forgotten and the handoff files
// it wrote (the project's handoff.md when it is current, the global copy,
// its history copies); dryRun only says what it would do. What it does is
// written to out, what it could not to errw.
func (s *Store) Forget(id string, dryRun bool, out, errw io.Writer) error {
	if s.l == nil {
		return NotFound{fmt.Errorf("no session %q: there is no ledger yet (%s)", id, s.Path)}
	}
	l := s.l
	ss, err := l.FindSessions(id)
	if err != nil {
		return err
	}
	if len(ss) == 0 {
		return NotFound{fmt.Errorf("no session %q in the ledger (`carryover list --all` shows the sessions)", id)}
	}
	if natives := distinctNatives(ss); len(natives) > 1 {
		return fmt.Errorf("%q starts %d session ids (%s…); give more of it", id, len(natives), natives[0])
	}
	for _, se := range ss {
		f, err := l.ForgetPlan(se)
		if err != nil {
			return err
		}
		recs, _ := l.HandoffRecords(se.Project, -1)
		var ids []string
		current := false
		for _, r := range recs {
			if r.SessionID == se.ID {
				ids = append(ids, r.ID)
				if b, err := publish.ReadHandoffFile(se.Project); err == nil && publish.IDOf(publish.HeaderOf(string(b))) == r.ID {
					current = true
				}
			}
		}
		all := slices.Clone(ids)
		held, _ := publish.HistoryIDs(se.Project)
		ids = slices.DeleteFunc(ids, func(id string) bool { return !slices.Contains(held, id) })
		verb := "forgot"
		if dryRun {
			verb = "would forget"
		}
		fmt.Fprintf(out, "%s %s session %s in %s: %d rows, %d cursors; %d handoff records marked forgotten\n",
			verb, se.Tool, se.NativeID, se.Project, f.Rows, f.Cursors, f.Handoffs)
		if current {
			p := publish.HandoffPath(se.Project)
			if dryRun {
				fmt.Fprintf(out, "would delete %s\n", p)
			} else if err := publish.RemoveOwnFile(se.Project, filepath.Base(p)); err == nil {
				fmt.Fprintf(out, "deleted %s\n", p)
			} else if !errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(errw, "carryover: could not delete %s: %v\n", p, err)
			}
		}
		if b, err := os.ReadFile(filepath.Join(s.env.Home, "handoff.md")); err == nil && slices.Contains(all, publish.IDOf(publish.HeaderOf(string(b)))) {
			p := filepath.Join(s.env.Home, "handoff.md") // the global copy of the last handoff
			if dryRun {
				fmt.Fprintf(out, "would delete %s\n", p)
			} else if err := os.Remove(p); err == nil {
				fmt.Fprintf(out, "deleted %s\n", p)
			}
		}
		if len(ids) > 0 {
			where := filepath.Join(publish.Dir(se.Project), publish.HistoryDir)
			if dryRun {
				fmt.Fprintf(out, "would delete %d handoff(s) from %s\n", len(ids), where)
			} else if err := publish.RemoveHistory(se.Project, ids); err != nil {
				fmt.Fprintf(errw, "carryover: could not delete its handoffs from %s: %v\n", where, err)
			} else {
				fmt.Fprintf(out, "deleted %d handoff(s) from %s\n", len(ids), where)
			}
		}
		if dryRun {
			continue
		}
		if err := l.Forget(se); err != nil {
			return fmt.Errorf("%v (nothing of the session was removed; try again when no agent is running)", err)
		}
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
