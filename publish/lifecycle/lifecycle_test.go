package lifecycle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

func TestHandoffLogEndingsAndDecisions(t *testing.T) {
	l, err := ledger.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	r := ledger.HandoffRecord{ID: "HO-20261101-120000-a", Project: "/p", Tool: "claude", SessionID: 1, Files: []string{"a.go", "b.go"}, Written: t0, Updated: t0}
	if err := Save(l, r); err != nil {
		t.Fatal(err)
	}
	r.Goal, r.Updated = "new goal", t0.Add(time.Minute)
	Save(l, r)
	End(l, r.ID, ledger.EndSuperseded, t0.Add(2*time.Minute))
	End(l, r.ID, ledger.EndSuperseded, t0.Add(3*time.Minute)) // keeps the first
	got, err := ByID(l, r.ID)
	if err != nil || got.Goal != "new goal" || !got.Written.Equal(t0) || got.Ended != ledger.EndSuperseded || !got.EndedAt.Equal(t0.Add(2*time.Minute)) || len(got.Files) != 2 {
		t.Fatalf("record = %+v, %v", got, err)
	}
	End(l, r.ID, ledger.EndCleared, t0.Add(4*time.Minute)) // clearing wins
	End(l, r.ID, ledger.EndSuperseded, t0.Add(5*time.Minute))
	if got, _ := ByID(l, r.ID); got.Ended != ledger.EndCleared {
		t.Errorf("ended = %q; want cleared", got.Ended)
	}
	if _, err := ByID(l, "HO-x"); err != ErrNoRecord {
		t.Errorf("unknown id: %v", err)
	}

	AddDecision(l, "/p", ledger.Decision{Text: "use sqlite", Source: ledger.DecisionExtracted, At: t0})
	AddDecision(l, "/p", ledger.Decision{Text: "no ORM", Source: ledger.DecisionUser, At: t0})
	DropDecision(l, "/p", "use sqlite")
	if changed, _ := AddDecision(l, "/p", ledger.Decision{Text: "use sqlite", Source: ledger.DecisionExtracted, At: t0.Add(time.Hour)}); changed {
		t.Error("the extractor brought a dropped decision back")
	}
	ds, _ := Decisions(l, "/p")
	if len(ds) != 1 || ds[0].Text != "no ORM" {
		t.Errorf("decisions = %+v", ds)
	}
	AddDecision(l, "/p", ledger.Decision{Text: "use sqlite", Why: "one file", Source: ledger.DecisionUser, At: t0.Add(time.Hour)})
	if ds, _ := Decisions(l, "/p"); len(ds) != 2 || ds[0].Text != "use sqlite" || ds[0].Why != "one file" {
		t.Errorf("the user's decision did not revive the dropped one first: %+v", ds)
	}

	if _, ok := Task(l, "/p"); ok {
		t.Error("a task before any was pinned")
	}
	PinTask(l, "/p", "ship it", t0)
	if tk, ok := Task(l, "/p"); !ok || tk.Text != "ship it" {
		t.Errorf("Task = %+v, %v", tk, ok)
	}
	if tk, ok, err := UnpinTask(l, "/p"); !ok || err != nil || tk.Text != "ship it" {
		t.Errorf("UnpinTask = %+v, %v, %v", tk, ok, err)
	}
	if _, ok, _ := UnpinTask(l, "/p"); ok {
		t.Error("unpinned twice")
	}
}

// TestRecord: one transaction stores the digest (trusted), the current
// handoff, the record under its id, and the end of the handoff it
// supersedes.
func TestRecord(t *testing.T) {
	l, err := ledger.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	p := &publish.Project{Root: "/p", Now: t0}
	h := distill.Handoff{Tool: "claude", SessionID: 1, Task: "t"}
	first := Begin(p, l, h, "a")
	first.Record("# h1")
	p.Now = t0.Add(time.Hour)
	h.Tool, h.SessionID = "codex", 2
	second := Begin(p, l, h, "b")
	second.Record("# h2")
	for _, d := range []string{"# h1", "# h2"} {
		if ok, err := l.HandoffTrusted("/p", publish.Digest([]byte(d))); !ok || err != nil {
			t.Errorf("digest of %s not trusted: %v", d, err)
		}
	}
	if hs, err := Handoffs(l); err != nil || len(hs) != 1 || hs[0].Header != "# h2" {
		t.Errorf("current handoff: %+v, %v", hs, err)
	}
	old, err := ByID(l, first.ID)
	if err != nil || old.Ended != ledger.EndSuperseded || !old.EndedAt.Equal(p.Now) {
		t.Errorf("superseded record: %+v, %v", old, err)
	}
	if cur, err := ByID(l, second.ID); err != nil || cur.Ended != "" || cur.Hash != publish.Digest([]byte("# h2")) || cur.Tool != "codex" {
		t.Errorf("current record: %+v, %v", cur, err)
	}
}

func TestHandoffTrusted(t *testing.T) {
	l, err := ledger.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t0 := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for i := 0; i < keepPublished+3; i++ {
		if err := recordCurrent(l, ledger.Handoff{Project: "/p", Header: "h", Tool: "claude", Written: t0.Add(time.Duration(i) * time.Second), Hash: fmt.Sprint("h", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < keepPublished+3; i++ {
		ok, err := l.HandoffTrusted("/p", fmt.Sprint("h", i))
		if err != nil {
			t.Fatal(err)
		}
		if want := i >= 3; ok != want {
			t.Errorf("hash h%d trusted=%v, want %v", i, ok, want)
		}
	}
	if ok, _ := l.HandoffTrusted("/other", "h10"); ok {
		t.Error("a hash recorded for /p is trusted for /other")
	}
}

func TestStatusTransitions(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	rec := func(ended string) ledger.HandoffRecord {
		return ledger.HandoffRecord{ID: "HO-20261101-120000-a", SessionID: 1, Written: t0, Updated: t0, Ended: ended}
	}
	took := []Consumer{{Tool: "codex", SessionID: 2, NativeID: "b", At: t0.Add(time.Hour)}}
	tests := []struct {
		name   string
		r      ledger.HandoffRecord
		cs     []Consumer
		now    time.Time
		expire time.Duration
		want   string
	}{
		{"fresh", rec(""), nil, t0.Add(time.Minute), 0, StatusActive},
		{"received", rec(""), took, t0.Add(2 * time.Hour), 0, StatusConsumed},
		{"superseded unreceived", rec(ledger.EndSuperseded), nil, t0.Add(time.Hour), 0, StatusSuperseded},
		{"received then superseded", rec(ledger.EndSuperseded), took, t0.Add(time.Hour), 0, StatusConsumed},
		{"default 7d not yet", rec(""), nil, t0.Add(7*24*time.Hour - time.Second), 0, StatusActive},
		{"default 7d past", rec(""), nil, t0.Add(7*24*time.Hour + time.Second), 0, StatusExpired},
		{"configured 1h", rec(""), nil, t0.Add(61 * time.Minute), time.Hour, StatusExpired},
		{"cleared wins", rec(ledger.EndCleared), took, t0.Add(time.Minute), 0, StatusCleared},
		{"cleared old", rec(ledger.EndCleared), nil, t0.Add(30 * 24 * time.Hour), 0, StatusCleared},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StatusOf(tt.r, tt.cs, tt.now, tt.expire); got.Status != tt.want {
				t.Errorf("StatusOf = %q; want %q", got.Status, tt.want)
			}
		})
	}
}

func TestAlreadyResumed(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	cs := []Consumer{
		{Tool: "claude", SessionID: 2, NativeID: "0123456789", At: now.Add(-3 * time.Hour), LastSeen: now.Add(-3 * time.Hour)},
		{Tool: "codex", SessionID: 3, NativeID: "abcdefabcdef", At: now.Add(-5 * time.Minute), LastSeen: now.Add(-time.Minute)},
	}
	if got := AlreadyResumed(cs, 9, now); !strings.Contains(got, "already resumed by codex session abcdefab 5m ago") {
		t.Errorf("AlreadyResumed = %q", got)
	}
	if got := AlreadyResumed(cs, 3, now); got != "" {
		t.Errorf("a session is told it resumed itself: %q", got)
	}
	if got := AlreadyResumed(cs[:1], 9, now); got != "" {
		t.Errorf("a session idle for 3h still counts as working: %q", got)
	}
}

func TestStaleLines(t *testing.T) {
	root := t.TempDir()
	written := time.Now().Add(-time.Hour)
	for _, f := range []string{"a.go", "b.go"} {
		os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644)
	}
	os.Chtimes(filepath.Join(root, "b.go"), written.Add(-time.Minute), written.Add(-time.Minute))
	os.Symlink("/etc/passwd", filepath.Join(root, "link.go"))
	r := ledger.HandoffRecord{Files: []string{"a.go", "b.go", "gone.go", "link.go", "../outside.go"}, Updated: written, Head: "abc1234", Branch: "main"}
	got := strings.Join(staleLines(r, root, "def5678", "feature", distill.CommitCount{}), "\n")
	for _, want := range []string{"Changed on disk since: a.go, gone.go (gone)", "Branch switched since: main → feature", "Commits since: HEAD abc1234 → def5678"} {
		if !strings.Contains(got, want) {
			t.Errorf("StaleLines lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"b.go", "link.go", "outside"} {
		if strings.Contains(got, not) {
			t.Errorf("StaleLines names %q:\n%s", not, got)
		}
	}
	if l := staleLines(r, root, "abc1234", "main", distill.CommitCount{}); len(l) != 1 {
		t.Errorf("same HEAD and branch: %v", l)
	}
}

// TestAddExtractedSupersedes: a decision the fold replaced leaves the log with it (it stayed and was shown on every
// later Stop); an unrelated one, one the fold still holds and the user's own stay. Held out: the German pair.
func TestAddExtractedSupersedes(t *testing.T) {
	l, err := ledger.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := &publish.Project{Root: "/p", Now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	AddDecision(l, "/p", ledger.Decision{Text: "Keep sessions in the memory store", Source: ledger.DecisionUser, At: p.Now})
	addExtracted(p, l, []string{"We keep sessions in the memory store", "Logs go to stderr", "Wir nutzen SQLite für den Cache"})
	p.Now = p.Now.Add(time.Minute)
	ds := addExtracted(p, l, []string{"Logs go to stderr", "Move sessions from the memory store to Redis",
		"Statt SQLite nehmen wir Postgres für den Cache"})
	var got []string
	for _, d := range ds {
		got = append(got, d.Text)
	}
	want := "Keep sessions in the memory store|Statt SQLite nehmen wir Postgres für den Cache|" +
		"Move sessions from the memory store to Redis|Logs go to stderr"
	if strings.Join(got, "|") != want {
		t.Errorf("decisions = %q\nwant %q", got, want)
	}
	if again, _ := Decisions(l, "/p"); len(again) != len(ds) {
		t.Errorf("the log still lists %d decisions, the handoff %d", len(again), len(ds))
	}
}
