package lifecycle

import (
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
)

// AddDecision adds a decision to the project's log. An extracted one
// never overrides what is there (a dropped decision stays dropped); the
// user's own revives and upgrades it. It reports whether the log changed.
func AddDecision(s ledger.Store, project string, d ledger.Decision) (bool, error) {
	q := `INSERT INTO decisions (project, text, why, source, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	if d.Source == ledger.DecisionUser {
		q = `INSERT INTO decisions (project, text, why, source, at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (project, text) DO UPDATE SET why = excluded.why, source = excluded.source, at = excluded.at, dropped = 0`
	}
	return ledger.Changed(s, q, project, d.Text, d.Why, d.Source, d.At.UnixMilli())
}

// Decisions lists a project's live decisions: the user's first, then the
// extracted ones, each newest first (the order `decide --list` numbers).
func Decisions(s ledger.Store, project string) ([]ledger.Decision, error) {
	return ledger.All(s, func(sc ledger.Scanner) (d ledger.Decision, err error) {
		var at int64
		err = sc.Scan(&d.Text, &d.Why, &d.Source, &at)
		d.At = time.UnixMilli(at)
		return d, err
	}, `SELECT text, why, source, at FROM decisions WHERE project = ? AND dropped = 0
		ORDER BY source = 'user' DESC, at DESC, rowid DESC`, project)
}

// decisionTexts is every decision the project's log holds, dropped ones
// included (the extractor must not bring those back).
func decisionTexts(s ledger.Store, project string) (map[string]bool, error) {
	ts, err := ledger.All(s, func(sc ledger.Scanner) (t string, err error) { return t, sc.Scan(&t) },
		`SELECT text FROM decisions WHERE project = ?`, project)
	out := map[string]bool{}
	for _, t := range ts {
		out[t] = true
	}
	return out, err
}

// addExtracted adds the fold's decisions the log lacks (a Stop re-renders
// every turn, and most turns decide nothing new; dropped ones stay
// dropped) and returns the log.
func addExtracted(p *publish.Project, l *ledger.Ledger, extracted []string) []ledger.Decision {
	known, _ := decisionTexts(l, p.Root)
	for _, d := range extracted {
		if known[d] {
			continue
		}
		if _, err := AddDecision(l, p.Root, ledger.Decision{Text: d, Source: ledger.DecisionExtracted, At: p.Now}); err != nil {
			logf(p, "decisions log: %v", err)
			break
		}
	}
	ds, _ := Decisions(l, p.Root)
	return ds
}

// DropDecision marks a decision dropped (it is kept, so the extractor
// does not bring it back).
func DropDecision(s ledger.Store, project, text string) error {
	_, err := s.Exec(`UPDATE decisions SET dropped = 1 WHERE project = ? AND text = ?`, project, text)
	return err
}

// PinTask sets the project's pinned task.
func PinTask(s ledger.Store, project, text string, at time.Time) error {
	_, err := s.Exec(`INSERT INTO pinned_task (project, text, at) VALUES (?, ?, ?)
		ON CONFLICT (project) DO UPDATE SET text = excluded.text, at = excluded.at`, project, text, at.UnixMilli())
	return err
}

// Task returns the project's pinned task (ok false when none).
func Task(s ledger.Store, project string) (ledger.PinnedTask, bool) {
	var t ledger.PinnedTask
	var at int64
	if err := s.QueryRow(`SELECT text, at FROM pinned_task WHERE project = ?`, project).Scan(&t.Text, &at); err != nil {
		return t, false
	}
	t.At = time.UnixMilli(at)
	return t, true
}

// UnpinTask removes the project's pinned task, returning it.
func UnpinTask(s ledger.Store, project string) (ledger.PinnedTask, bool, error) {
	t, ok := Task(s, project)
	if !ok {
		return t, false, nil
	}
	_, err := s.Exec(`DELETE FROM pinned_task WHERE project = ?`, project)
	return t, true, err
}
