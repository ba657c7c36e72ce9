package ledger

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func TestHandoffLogEndingsAndDecisions(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	r := HandoffRecord{ID: "HO-20261101-120000-a", Project: "/p", Tool: "claude", SessionID: 1, Files: []string{"a.go", "b.go"}, Written: t0, Updated: t0}
	if err := l.SaveHandoffRecord(r); err != nil {
		t.Fatal(err)
	}
	r.Goal, r.Updated = "new goal", t0.Add(time.Minute)
	l.SaveHandoffRecord(r)
	l.EndHandoff(r.ID, EndSuperseded, t0.Add(2*time.Minute))
	l.EndHandoff(r.ID, EndSuperseded, t0.Add(3*time.Minute)) // keeps the first
	got, err := l.HandoffRecordByID(r.ID)
	if err != nil || got.Goal != "new goal" || !got.Written.Equal(t0) || got.Ended != EndSuperseded || !got.EndedAt.Equal(t0.Add(2*time.Minute)) || len(got.Files) != 2 {
		t.Fatalf("record = %+v, %v", got, err)
	}
	l.EndHandoff(r.ID, EndCleared, t0.Add(4*time.Minute)) // clearing wins
	l.EndHandoff(r.ID, EndSuperseded, t0.Add(5*time.Minute))
	if got, _ := l.HandoffRecordByID(r.ID); got.Ended != EndCleared {
		t.Errorf("ended = %q; want cleared", got.Ended)
	}
	if _, err := l.HandoffRecordByID("HO-x"); err != ErrNoRecord {
		t.Errorf("unknown id: %v", err)
	}

	l.AddDecision("/p", Decision{Text: "use sqlite", Source: DecisionExtracted, At: t0})
	l.AddDecision("/p", Decision{Text: "no ORM", Source: DecisionUser, At: t0})
	l.DropDecision("/p", "use sqlite")
	if changed, _ := l.AddDecision("/p", Decision{Text: "use sqlite", Source: DecisionExtracted, At: t0.Add(time.Hour)}); changed {
		t.Error("the extractor brought a dropped decision back")
	}
	ds, _ := l.Decisions("/p")
	if len(ds) != 1 || ds[0].Text != "no ORM" {
		t.Errorf("decisions = %+v", ds)
	}
	l.AddDecision("/p", Decision{Text: "use sqlite", Why: "one file", Source: DecisionUser, At: t0.Add(time.Hour)})
	if ds, _ := l.Decisions("/p"); len(ds) != 2 || ds[0].Text != "use sqlite" || ds[0].Why != "one file" {
		t.Errorf("the user's decision did not revive the dropped one first: %+v", ds)
	}

	if _, ok := l.Task("/p"); ok {
		t.Error("a task before any was pinned")
	}
	l.PinTask("/p", "ship it", t0)
	if tk, ok := l.Task("/p"); !ok || tk.Text != "ship it" {
		t.Errorf("Task = %+v, %v", tk, ok)
	}
	if tk, ok, err := l.UnpinTask("/p"); !ok || err != nil || tk.Text != "ship it" {
		t.Errorf("UnpinTask = %+v, %v, %v", tk, ok, err)
	}
	if _, ok, _ := l.UnpinTask("/p"); ok {
		t.Error("unpinned twice")
	}
}

// TestLifecycleAfterMigration: a ledger at any earlier schema gets the
// lifecycle tables on Open, and its sessions and receipts join them.
func TestLifecycleAfterMigration(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for v := 1; v < len(migrations); v++ {
		dir := t.TempDir()
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, FileName))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range migrations[:v] {
			if _, err := db.Exec(m); err != nil {
				t.Fatal(err)
			}
		}
		db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v))
		db.Exec(`INSERT INTO sessions (id, tool, native_id, project, first_seen, last_seen) VALUES (1, 'claude', 'a', '/p', 0, 0), (2, 'codex', 'b', '/p', 0, 0)`)
		db.Exec(`INSERT INTO deliveries (project, header, tool, session_id, via, at) VALUES ('/p', '# h · HO-20261101-120000-a', 'codex', 2, 'hook', 1)`)
		db.Close()
		l, err := Open(dir)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		r := HandoffRecord{ID: "HO-20261101-120000-a", Project: "/p", Tool: "claude", SessionID: 1, Written: t0, Updated: t0}
		if err := l.SaveHandoffRecord(r); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if cs, err := l.Consumers(r); err != nil || len(cs) != 1 || cs[0].Tool != "codex" || cs[0].NativeID != "b" {
			t.Errorf("v%d: consumers %+v, %v", v, cs, err)
		}
		if _, err := l.AddDecision("/p", Decision{Text: "x", Source: DecisionUser, At: t0}); err != nil {
			t.Errorf("v%d: %v", v, err)
		}
		l.Close()
	}
}
