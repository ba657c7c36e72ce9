package distill_test

import (
	"testing"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

// TestProjectFold: the manual path's fold across agents keeps the project's
// task when the newest session is a trivial question in another agent, and
// names both sessions.
func TestProjectFold(t *testing.T) {
	l, err := ledger.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	write := func(tool, id string, rows ...adapters.Row) {
		for i := range rows {
			rows[i].Key = id + string(rune('a'+i))
			rows[i].Time = now
		}
		if _, err := l.Write(ledger.Batch{Session: ledger.SessionRef{Tool: tool, NativeID: id, Project: "/p"}, Rows: rows}, now); err != nil {
			t.Fatal(err)
		}
	}
	write("copilot-cli", "cop-1",
		adapters.Row{Kind: adapters.KindPrompt, Role: "user", Text: "Outline a Q3 investor update for our Series B investors"},
		adapters.Row{Kind: adapters.KindText, Role: "assistant", Text: "Next I will draft the revenue section."})
	write("claude", "cla-2", adapters.Row{Kind: adapters.KindPrompt, Role: "user", Text: "What should we work on now?"})
	h, from, err := distill.ProjectFold(l, "/p", now, distill.Options{Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Task != "Outline a Q3 investor update for our Series B investors" || h.Latest != "What should we work on now?" {
		t.Errorf("task %q, latest %q", h.Task, h.Latest)
	}
	if len(from) != 2 || from[0] != "copilot-cli session cop-1" || from[1] != "claude session cla-2" {
		t.Errorf("drawn from %q", from)
	}
}
