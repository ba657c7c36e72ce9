package distill_test

import (
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish/lifecycle"
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

// TestClearSurvivesRebuild: `carryover clear` is a task boundary the
// ledger keeps (the handoff record ended as cleared, with its time), so a
// distill state rebuilt from rows (a new StateVersion, a cold ingest)
// starts the new task there, as the stored state did at the clear.
func TestClearSurvivesRebuild(t *testing.T) {
	l, err := ledger.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	at := now.Add(-time.Hour)
	write := func(id string, rows ...adapters.Row) {
		for i := range rows {
			at = at.Add(time.Minute)
			rows[i].Key = id + at.Format(time.RFC3339Nano)
			rows[i].Time = at
		}
		if _, err := l.Write(ledger.Batch{Session: ledger.SessionRef{Tool: "claude", NativeID: id, Project: "/p"}, Rows: rows}, at); err != nil {
			t.Fatal(err)
		}
	}
	write("s1", adapters.Row{Kind: adapters.KindPrompt, Role: "user", Text: "Migrate the billing service to the new invoice schema"},
		adapters.Row{Kind: adapters.KindText, Role: "assistant", Text: "I migrated the invoice tables."})
	if err := lifecycle.Save(l, ledger.HandoffRecord{ID: "h1", Project: "/p", Tool: "claude", Written: at, Updated: at}); err != nil {
		t.Fatal(err)
	}
	recs, err := lifecycle.Records(l, "/p", 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %v %v", recs, err)
	}
	at = at.Add(time.Minute)
	if err := lifecycle.End(l, recs[0].ID, ledger.EndCleared, at); err != nil {
		t.Fatal(err)
	}
	if err := distill.ClearTask(l, "/p", at); err != nil {
		t.Fatal(err)
	}
	// The same session goes on with a short follow-up-looking request: only
	// the boundary makes it the Task.
	write("s1", adapters.Row{Kind: adapters.KindPrompt, Role: "user", Text: "now add a CSV export of the invoices"})
	check := func(when string) {
		t.Helper()
		h, _, err := distill.ProjectFold(l, "/p", now, distill.Options{Project: "/p"})
		if err != nil {
			t.Fatal(err)
		}
		if h.Task != "now add a CSV export of the invoices" || h.Latest != "" {
			t.Errorf("%s: task %q, latest %q", when, h.Task, h.Latest)
		}
	}
	check("stored state")
	if err := l.DropState("/p"); err != nil { // as a new StateVersion or a cold ingest would
		t.Fatal(err)
	}
	check("rebuilt state")
}
