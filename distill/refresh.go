package distill

import (
	"time"

	"github.com/carryover/carryover/adapters/ledger"
)

// MaxFold is the most new rows Refresh folds into a stored state; past it
// (a cold ingest) the state is rebuilt from the project's recent rows.
const MaxFold = 5000

// Refresh brings the project's stored distill state up to date with the
// rows added since it was saved, or rebuilds it from the recent rows when
// there is none (or it is stale, or too far behind), and saves it. notes
// are things worth a log line.
func Refresh(l *ledger.Ledger, project string, now time.Time) (st *State, notes []string, err error) {
	sessions, err := l.ProjectSessions(project)
	if err != nil {
		return nil, nil, err
	}
	raw, seqs, version, ok := l.LoadState(project)
	st, fresh := LoadState(raw)
	pending := 0
	if ok && fresh {
		for _, s := range sessions {
			pending += int(max(0, s.LastSeq-seqs[s.ID]))
		}
	}
	if !ok || !fresh || pending > MaxFold {
		rows, err := l.RecentRows(project)
		if err != nil {
			return nil, nil, err
		}
		st = NewState()
		for i := range rows {
			st.Add(&rows[i])
		}
		seqs = ledger.Seqs{}
		for _, s := range sessions {
			seqs[s.ID] = s.LastSeq
		}
	} else {
		for _, s := range sessions {
			if s.LastSeq <= seqs[s.ID] {
				continue
			}
			rows, err := l.RowsAfter(s, seqs[s.ID], MaxFold)
			if err != nil {
				return nil, nil, err
			}
			for i := range rows {
				st.Add(&rows[i])
				seqs[s.ID] = rows[i].Seq
			}
		}
	}
	if b, err := st.Marshal(); err == nil {
		if !ok || !fresh {
			version = "" // rebuilt: replace whatever is stored
			if ok {
				_ = l.DropState(project)
			}
		}
		if saved, err := l.SaveState(project, b, seqs, version, now); err != nil {
			notes = append(notes, "save distill state: "+err.Error())
		} else if !saved {
			notes = append(notes, "distill state was saved by a concurrent snapshot; kept theirs")
		}
	}
	return st, notes, nil
}

// ClearTask is `carryover clear` in the stored state: brought up to date,
// then its task forgotten (newTaskBoundary), so the next request is the
// next handoff's Task whatever it says. A state rebuilt later from the
// ledger (a new StateVersion, a cold ingest) no longer knows of the clear.
func ClearTask(l *ledger.Ledger, project string, now time.Time) error {
	if _, _, err := Refresh(l, project, now); err != nil {
		return err
	}
	raw, seqs, version, ok := l.LoadState(project)
	st, fresh := LoadState(raw)
	if !ok || !fresh {
		return nil
	}
	st.ClearTask()
	b, err := st.Marshal()
	if err != nil {
		return err
	}
	_, err = l.SaveState(project, b, seqs, version, now)
	return err
}
