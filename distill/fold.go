package distill

import (
	"fmt"

	"github.com/carryover/carryover/adapters/ledger"
)

// ProjectFold distills a project's recent rows across its sessions and
// agents — the fold handoff.md comes from (the hook path keeps it as a
// stored State; folding the same rows gives the same Handoff, see
// TestStateIncremental) — and names the sessions it drew from, oldest
// first, as "<agent> session <id>". A trivial last session ("what should
// we work on now?") cannot hide the project's task: it is one follow-up
// among the fold's prompts.
func ProjectFold(l *ledger.Ledger, project string, o Options) (Handoff, []string, error) {
	rows, err := l.RecentRows(project)
	if err != nil {
		return Handoff{}, nil, err
	}
	var from []string
	seen := map[int64]bool{}
	for _, r := range rows {
		if seen[r.SessionID] {
			continue
		}
		seen[r.SessionID] = true
		label := fmt.Sprintf("%s session #%d", r.Tool, r.SessionID)
		if s, err := l.SessionByID(r.SessionID); err == nil {
			id := s.NativeID
			if len(id) > 12 {
				id = id[:12]
			}
			label = fmt.Sprintf("%s session %s", s.Tool, id)
		}
		from = append(from, label)
	}
	return Distill(rows, o), from, nil
}
