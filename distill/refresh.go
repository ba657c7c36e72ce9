package distill

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
)

// Distillations counts Refresh and Distill calls: tests check that one
// hook event or manual handoff distils once (the State is handed to every
// writer; nothing is distilled again or re-parsed from markdown).
var Distillations atomic.Int64

// MaxFold is the most new rows Refresh folds into a stored state; past it
// (a cold ingest) the state is rebuilt from the project's recent rows.
const MaxFold = 5000

// Refresh brings the project's stored distill state up to date with the
// rows added since it was saved, or rebuilds it from the recent rows when
// there is none (or it is stale, or too far behind), and saves it. notes
// are things worth a log line.
func Refresh(l *ledger.Ledger, project string, now time.Time) (st *State, notes []string, err error) {
	Distillations.Add(1)
	sessions, err := l.ProjectSessions(project)
	if err != nil {
		return nil, nil, err
	}
	raw, seqs, version, ok := l.LoadState(project)
	st, fresh := LoadState(raw)
	if !ok || !fresh || pendingRows(sessions, seqs) > MaxFold {
		st, seqs, err = rebuild(l, project, sessions)
	} else {
		err = foldNew(l, st, sessions, seqs)
	}
	if err != nil {
		return nil, nil, err
	}
	b := st.Marshal()
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
	return st, notes, nil
}

// pendingRows is how many rows the sessions added since the stored
// state's seqs.
func pendingRows(sessions []ledger.ProjectSession, seqs ledger.Seqs) int {
	pending := 0
	for _, s := range sessions {
		pending += int(max(0, s.LastSeq-seqs[s.ID]))
	}
	return pending
}

// rebuild distils the project's recent rows into a new state.
func rebuild(l *ledger.Ledger, project string, sessions []ledger.ProjectSession) (*State, ledger.Seqs, error) {
	rows, err := l.RecentRows(project)
	if err != nil {
		return nil, nil, err
	}
	clears := clearTimes(l, project)
	st := NewState()
	for i := range rows {
		// A `carryover clear` is a task boundary the rebuild honours:
		// the first row after it starts a new task, as ClearTask did
		// to the stored state at the time.
		for len(clears) > 0 && rows[i].Time.After(clears[0]) {
			st.ClearTask()
			clears = clears[1:]
		}
		st.Add(&rows[i])
	}
	seqs := ledger.Seqs{}
	for _, s := range sessions {
		seqs[s.ID] = s.LastSeq
	}
	return st, seqs, nil
}

// foldNew folds the rows each session added since seqs into st, moving
// seqs along.
func foldNew(l *ledger.Ledger, st *State, sessions []ledger.ProjectSession, seqs ledger.Seqs) error {
	for _, s := range sessions {
		if s.LastSeq <= seqs[s.ID] {
			continue
		}
		rows, err := l.RowsAfter(s, seqs[s.ID], MaxFold)
		if err != nil {
			return err
		}
		for i := range rows {
			st.Add(&rows[i])
			seqs[s.ID] = rows[i].Seq
		}
	}
	return nil
}

// clearTimes are the times the user cleared the project's handoff
// (`carryover clear` ends its record as EndCleared), oldest first: the
// boundaries a rebuild from rows honours. Rebuilds are rare (a new
// StateVersion, a cold ingest), so one query of the project's newest
// records costs the hook path nothing in the common case.
func clearTimes(l *ledger.Ledger, project string) []time.Time {
	ats, _ := ledger.All(l, func(sc ledger.Scanner) (at int64, err error) { return at, sc.Scan(&at) },
		`SELECT ended_at FROM (SELECT ended, ended_at FROM handoff_log WHERE project = ? ORDER BY written DESC, id DESC LIMIT ?)
		WHERE ended = ? AND ended_at != 0`, project, maxClears, ledger.EndCleared)
	var out []time.Time
	for _, at := range ats {
		out = append(out, time.UnixMilli(at))
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// maxClears is how many of the project's newest handoff records a rebuild
// reads for clears: the rows it folds are recent too (RecentRows).
const maxClears = 200

// ClearTask is `carryover clear` in the stored state: brought up to date,
// then its task forgotten (State.ClearTask), so the next request is the
// next handoff's Task whatever it says. A state rebuilt later from the
// ledger (a new StateVersion, a cold ingest) honours the clear too: the
// ledger keeps its time (clearTimes).
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
	_, err := l.SaveState(project, st.Marshal(), seqs, version, now)
	return err
}

// maxDrawnFrom is how many sessions ProjectFold names (the newest).
const maxDrawnFrom = 6

// ProjectFold is the project's handoff across its sessions and agents: the
// stored-state fold handoff.md comes from (Refresh, brought up to date and
// saved as the hook path would), and the sessions it drew from, oldest
// first, as "<agent> session <id>" (the newest maxDrawnFrom). A trivial
// last session ("what should we work on now?") cannot hide the project's
// task: it is one follow-up among the fold's prompts.
func ProjectFold(l *ledger.Ledger, project string, now time.Time, o Options) (Handoff, []string, error) {
	st, _, err := Refresh(l, project, now)
	if err != nil {
		return Handoff{}, nil, err
	}
	sessions, err := l.ProjectSessions(project)
	if err != nil {
		return Handoff{}, nil, err
	}
	var from []string
	for _, s := range sessions {
		if s.LastSeq <= 0 {
			continue
		}
		label := fmt.Sprintf("%s session #%d", s.Tool, s.ID)
		if ls, err := l.SessionByID(s.ID); err == nil {
			id := ls.NativeID
			if len(id) > 12 {
				id = id[:12]
			}
			label = fmt.Sprintf("%s session %s", ls.Tool, id)
		}
		from = append(from, label)
	}
	from = last(from, maxDrawnFrom)
	return st.Handoff(o), from, nil
}
