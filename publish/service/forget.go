package service

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/lifecycle"
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
	ss, err := s.l.FindSessions(id)
	if err != nil {
		return err
	}
	if len(ss) == 0 {
		return NotFound{fmt.Errorf("no session %q in the ledger (`carryover list --all` shows the sessions)", id)}
	}
	if natives := distinctNatives(ss); len(natives) > 1 {
		return fmt.Errorf("%q starts %d session ids (%s…); give more of it", id, len(natives), natives[0])
	}
	f := forgetting{Store: s, dryRun: dryRun, out: out, errw: errw}
	for _, se := range ss {
		if err := f.session(se); err != nil {
			return err
		}
	}
	return nil
}

// forgetting is one `carryover forget`.
type forgetting struct {
	*Store
	dryRun    bool
	out, errw io.Writer
}

// session forgets one ledger session and the handoff files it wrote.
func (f forgetting) session(se ledger.Session) error {
	plan, err := f.l.ForgetPlan(se)
	if err != nil {
		return err
	}
	verb := "forgot"
	if f.dryRun {
		verb = "would forget"
	}
	fmt.Fprintf(f.out, "%s %s session %s in %s: %d rows, %d cursors; %d handoff records marked forgotten\n",
		verb, se.Tool, se.NativeID, se.Project, plan.Rows, plan.Cursors, plan.Handoffs)
	ids := f.handoffIDs(se)
	if b, err := publish.ReadHandoffFile(se.Project); err == nil && slices.Contains(ids, publish.IDOf(publish.HeaderOf(string(b)))) {
		f.remove(publish.HandoffPath(se.Project), func() error { return publish.RemoveOwnFile(se.Project, "handoff.md") })
	}
	global := filepath.Join(f.env.Home, "handoff.md") // the global copy of the last handoff
	if b, err := os.ReadFile(global); err == nil && slices.Contains(ids, publish.IDOf(publish.HeaderOf(string(b)))) {
		f.remove(global, func() error { return os.Remove(global) })
	}
	held, _ := publish.HistoryIDs(se.Project)
	if ids = slices.DeleteFunc(ids, func(id string) bool { return !slices.Contains(held, id) }); len(ids) > 0 {
		where := filepath.Join(publish.Dir(se.Project), publish.HistoryDir)
		f.remove(fmt.Sprintf("%d handoff(s) from %s", len(ids), where), func() error { return publish.RemoveHistory(se.Project, ids) })
	}
	if f.dryRun {
		return nil
	}
	if err := f.l.Forget(se); err != nil {
		return fmt.Errorf("%v (nothing of the session was removed; try again when no agent is running)", err)
	}
	// `list`'s cache of the session's description goes with it.
	if err := adapters.OpenDescriptionFile(f.env.Home).Forget(se.NativeID, se.Transcript); err != nil {
		fmt.Fprintf(f.errw, "carryover: could not drop the session from %s: %v\n", filepath.Join(f.env.Home, adapters.ListCacheName), err)
	}
	return nil
}

// handoffIDs are the ids of the handoffs the session published.
func (f forgetting) handoffIDs(se ledger.Session) []string {
	recs, _ := lifecycle.Records(f.l, se.Project, -1)
	var ids []string
	for _, r := range recs {
		if r.SessionID == se.ID {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// remove deletes what (or says it would), telling why it could not.
func (f forgetting) remove(what string, del func() error) {
	if f.dryRun {
		fmt.Fprintf(f.out, "would delete %s\n", what)
	} else if err := del(); err == nil {
		fmt.Fprintf(f.out, "deleted %s\n", what)
	} else if !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(f.errw, "carryover: could not delete %s: %v\n", what, err)
	}
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
