package ledger

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

func gcLedger(t *testing.T) (*Ledger, map[string]int64, time.Time) {
	t.Helper()
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	recent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ids := map[string]int64{}
	for _, s := range []struct {
		name, project string
		at            time.Time
	}{{"old", "/p", old}, {"source", "/p", old}, {"new", "/p", recent}, {"other", "/q", old}, {"waiting", "/p", old}} {
		var rows []adapters.Row
		for i := 0; i < 50; i++ {
			rows = append(rows, adapters.Row{Key: fmt.Sprint(i), Time: s.at, Role: "user", Kind: adapters.KindPrompt, Text: strings.Repeat("x", 2000)})
		}
		ref := SessionRef{Tool: "claude", NativeID: s.name, Project: s.project}
		if _, err := l.Write(Batch{Session: ref, Rows: rows}, s.at); err != nil {
			t.Fatal(err)
		}
		ss, err := l.SessionIn("claude", s.name, s.project)
		if err != nil {
			t.Fatal(err)
		}
		ids[s.name] = ss.ID
	}
	if err := l.RecordHandoff(Handoff{Project: "/p", Header: "# h", Tool: "claude", SessionID: ids["source"], Written: old, Hash: "abc"}); err != nil {
		t.Fatal(err)
	}
	if err := l.RecordDelivery(Delivery{Project: "/p", Header: "# h", Tool: "claude", SessionID: ids["old"], Via: "hook", At: old}); err != nil {
		t.Fatal(err)
	}
	if err := l.MarkPendingInject(ids["waiting"], old); err != nil {
		t.Fatal(err)
	}
	if ok, err := l.SaveState("/p", []byte("decisions"), Seqs{ids["old"]: 50}, "", old); !ok || err != nil {
		t.Fatal(ok, err)
	}
	// The lifecycle's records of old sessions: a handoff written from one,
	// the decision log, a pinned task, a limit it hit.
	if err := l.SaveHandoffRecord(HandoffRecord{ID: "HO-20250101-000000-old00000", Project: "/p", Tool: "claude", SessionID: ids["old"], NativeID: "old", Written: old, Updated: old}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []Decision{{Text: "use SQLite", Why: "one file", Source: DecisionUser, At: old}, {Text: "keep the v1 API", Source: DecisionExtracted, At: old}} {
		if _, err := l.AddDecision("/p", d); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.PinTask("/p", "port the queue", old); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RecordLimit(LimitEvent{SessionID: ids["old"], Key: "k", Project: "/p", Tool: "claude", Limit: adapters.Limit{Kind: "rate", Reached: true}, At: old}); err != nil {
		t.Fatal(err)
	}
	return l, ids, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
}

func (l *Ledger) countRows(t *testing.T, id int64) int {
	var n int
	if err := l.db.QueryRow(`SELECT COUNT(*) FROM rows WHERE session_id = ?`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (l *Ledger) records(t *testing.T) string {
	var out []string
	for _, table := range []string{"handoffs", "deliveries", "published", "distill_state", "pending_inject", "cursors", "handoff_log", "decisions", "pinned_task", "limit_events"} {
		var n int
		if err := l.db.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s=%d", table, n))
	}
	return strings.Join(out, " ")
}

// TestGCNeverRemoves: gc removes the rows of sessions last active before
// the cut-off, and never handoff records (handoffs, deliveries, published
// digests, the handoff log), decisions (the decision log and the distill
// state), a pinned task, limit events, the rows of a session newer
// than the cut-off, of the current handoff's source session, or of a
// session a handoff waits to be injected into.
func TestGCNeverRemoves(t *testing.T) {
	l, ids, cut := gcLedger(t)
	before := l.records(t)
	if !strings.Contains(before, "handoff_log=1 decisions=2 pinned_task=1 limit_events=1") {
		t.Fatalf("the fixture lacks lifecycle records: %s", before)
	}
	state, _, _, _ := l.LoadState("/p")
	dry, err := l.GC(GCOptions{Before: cut, DryRun: true})
	if err != nil || dry.Sessions != 2 || dry.Rows != 100 || l.countRows(t, ids["old"]) != 50 {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	r, err := l.GC(GCOptions{Before: cut})
	if err != nil {
		t.Fatal(err)
	}
	if r.Sessions != 2 || r.Rows != 100 || r.Kept != 2 {
		t.Errorf("gc: %+v, want 2 sessions and 100 rows removed, 2 kept", r)
	}
	for name, want := range map[string]int{"old": 0, "other": 0, "source": 50, "new": 50, "waiting": 50} {
		if got := l.countRows(t, ids[name]); got != want {
			t.Errorf("session %s has %d rows after gc, want %d", name, got, want)
		}
	}
	if after := l.records(t); after != before {
		t.Errorf("records changed: %s -> %s", before, after)
	}
	if st, _, _, ok := l.LoadState("/p"); !ok || string(st) != string(state) {
		t.Errorf("distill state changed: %q", st)
	}
	if ds, _ := l.Deliveries("/p", 10); len(ds) != 1 || ds[0].NativeID != "old" {
		t.Errorf("delivery of a pruned session: %+v", ds)
	}
	if s, _ := l.SessionByID(ids["old"]); s.Rows != 0 {
		t.Errorf("pruned session still counts %d rows", s.Rows)
	}
	// Rows arriving later take new sequence numbers after the pruned ones.
	ref := SessionRef{Tool: "claude", NativeID: "old", Project: "/p"}
	if n, err := l.Write(Batch{Session: ref, Rows: []adapters.Row{{Key: "later", Role: "user", Kind: adapters.KindPrompt, Text: "y"}}}, time.Now()); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if rs, _ := l.Rows(ids["old"], 10); len(rs) != 1 || rs[0].Seq != 51 {
		t.Errorf("rows after prune: %+v", rs)
	}
	if s, _ := l.SessionByID(ids["old"]); s.Rows != 1 {
		t.Errorf("session counts %d rows, want 1", s.Rows)
	}
	if again, _ := l.GC(GCOptions{Before: cut}); again.Sessions != 0 {
		t.Errorf("second gc pruned %d sessions", again.Sessions)
	}
}

// TestGCProject: --project limits gc to one project's sessions.
func TestGCProject(t *testing.T) {
	l, ids, cut := gcLedger(t)
	r, err := l.GC(GCOptions{Before: cut, Project: "/q"})
	if err != nil || r.Sessions != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	if l.countRows(t, ids["other"]) != 0 || l.countRows(t, ids["old"]) != 50 {
		t.Error("gc --project removed the wrong rows")
	}
}

// TestGCVacuum: gc leaves the freed pages inside the file (reused by new
// rows); Vacuum gives them back; Space reports both and the projects.
func TestGCVacuum(t *testing.T) {
	l, _, cut := gcLedger(t)
	r, err := l.GC(GCOptions{Before: cut})
	if err != nil || r.AutoVacuum || r.FreeBytes <= 0 {
		t.Fatalf("%+v %v", r, err)
	}
	before := l.fileBytes()
	if err := l.Vacuum(); err != nil {
		t.Fatal(err)
	}
	sp, err := l.Space(true)
	if err != nil || sp.FreeBytes != 0 || sp.FileBytes >= before || len(sp.Projects) != 2 || sp.Projects[0].Project != "/p" {
		t.Errorf("after vacuum (file was %d): %+v %v", before, sp, err)
	}
	if len(sp.Tables) == 0 && sp.TablesNote == "" {
		t.Error("neither table sizes nor a note")
	}
}
