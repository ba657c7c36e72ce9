package distill

import (
	"fmt"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
)

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
	if len(from) > maxDrawnFrom {
		from = from[len(from)-maxDrawnFrom:]
	}
	return st.Handoff(o), from, nil
}
