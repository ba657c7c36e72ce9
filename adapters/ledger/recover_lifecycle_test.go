package ledger_test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
)

// TestRebuildKeepsLifecycle: a damaged ledger moved aside and rebuilt
// keeps what no transcript can give back — the handoff log (with how a
// handoff ended), the receipts saying who received it (and when that
// session was last seen, so an idle one does not count as working), the
// decisions recorded with `carryover decide` (a dropped one stays
// dropped), the pinned task and the published digests — re-keyed to the
// new ledger's sessions.
func TestRebuildKeepsLifecycle(t *testing.T) {
	garbageHeader := func(p string) {
		b := make([]byte, 100)
		rand.Read(b)
		f, _ := os.OpenFile(p, os.O_WRONLY, 0)
		f.WriteAt(b, 0)
		f.Close()
	}
	for _, tc := range []struct {
		name   string
		damage func(path string)
		reopen bool
		// walOnly: the lifecycle rows are still in the WAL, as a hook
		// leaves them (Leave does not checkpoint): the files are copied
		// while the ledger is open.
		walOnly bool
	}{
		{name: "garbage-header", damage: garbageHeader},
		{name: "garbage-header-rows-in-wal", damage: garbageHeader, walOnly: true},
		{name: "reopen-after-statement", reopen: true, damage: func(string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			buildLedger(t, dir)
			l, err := ledger.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			s1, _ := l.SessionIn("claude", "s1", "/p")
			s2, _ := l.SessionIn("claude", "s2", "/p")
			old := ledger.HandoffRecord{ID: "HO-20261121-100000-s0", Project: "/p", Tool: "claude", SessionID: s1.ID, NativeID: "s1",
				Goal: "Older goal", Written: now.Add(-2 * time.Hour), Updated: now.Add(-2 * time.Hour)}
			cur := ledger.HandoffRecord{ID: "HO-20261121-110000-s1", Project: "/p", Tool: "claude", SessionID: s1.ID, NativeID: "s1",
				Head: "abc1234", Branch: "main", Hash: "h1", Header: "# [CARRYOVER] x · HO-20261121-110000-s1", Goal: "Add a retry helper",
				Next: "run the tests", Files: []string{"a.go", "b.go"}, Written: now.Add(-time.Hour), Updated: now.Add(-30 * time.Minute)}
			for _, r := range []ledger.HandoffRecord{old, cur} {
				if err := l.SaveHandoffRecord(r); err != nil {
					t.Fatal(err)
				}
			}
			must(t, l.EndHandoff(old.ID, ledger.EndSuperseded, now.Add(-time.Hour)))
			must(t, l.RecordDelivery(ledger.Delivery{Project: "/p", Header: cur.Header, Tool: "claude", SessionID: s2.ID, Via: "hook", At: now.Add(-20 * time.Minute)}))
			must(t, l.RecordHandoff(ledger.Handoff{Project: "/p", Header: cur.Header, Tool: "claude", SessionID: s1.ID, Written: cur.Updated, Hash: "d1"}))
			for _, d := range []ledger.Decision{
				{Text: "Use Postgres advisory locks, not Redis", Why: "one service fewer", Source: ledger.DecisionUser, At: now.Add(-3 * time.Hour)},
				{Text: "Keep the CSV parser streaming", Source: ledger.DecisionExtracted, At: now.Add(-2 * time.Hour)},
				{Text: "Vendor the SDK", Source: ledger.DecisionExtracted, At: now.Add(-2 * time.Hour)},
			} {
				if _, err := l.AddDecision("/p", d); err != nil {
					t.Fatal(err)
				}
			}
			must(t, l.DropDecision("/p", "Vendor the SDK"))
			must(t, l.PinTask("/p", "Finish the CSV importer", now.Add(-4*time.Hour)))
			if tc.walOnly {
				wal, err := os.ReadFile(filepath.Join(dir, ledger.FileName+"-wal"))
				if err != nil || len(wal) == 0 {
					t.Fatalf("no WAL to test with: %v", err)
				}
				main, _ := os.ReadFile(filepath.Join(dir, ledger.FileName))
				dir = t.TempDir()
				os.WriteFile(filepath.Join(dir, ledger.FileName), main, 0o600)
				os.WriteFile(filepath.Join(dir, ledger.FileName+"-wal"), wal, 0o600)
			}
			l.Close()

			path := filepath.Join(dir, ledger.FileName)
			tc.damage(path)
			l, err = ledger.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.reopen {
				if l, err = l.Reopen(); err != nil {
					t.Fatal(err)
				}
			}
			defer l.Close()
			if !l.Recovered || l.RestoreErr != nil || l.Restored < 8 {
				t.Fatalf("recovered=%v restored=%d err=%v", l.Recovered, l.Restored, l.RestoreErr)
			}
			recs, err := l.HandoffRecords("/p", 10)
			if err != nil || len(recs) != 2 {
				t.Fatalf("handoff log after rebuild: %+v, %v", recs, err)
			}
			got := recs[0]
			ns1, _ := l.SessionIn("claude", "s1", "/p")
			if got.ID != cur.ID || got.SessionID != ns1.ID || got.Head != "abc1234" || got.Branch != "main" || got.Goal != cur.Goal ||
				got.Next != cur.Next || len(got.Files) != 2 || !got.Written.Equal(cur.Written) || !got.Updated.Equal(cur.Updated) || got.Ended != "" {
				t.Errorf("current record after rebuild: %+v\nwant %+v (session %d)", got, cur, ns1.ID)
			}
			if recs[1].ID != old.ID || recs[1].Ended != ledger.EndSuperseded {
				t.Errorf("older record after rebuild: %+v", recs[1])
			}
			cs, err := l.Consumers(got)
			if err != nil || len(cs) != 1 || cs[0].NativeID != "s2" || !cs[0].At.Equal(now.Add(-20*time.Minute)) {
				t.Fatalf("consumers after rebuild: %+v, %v", cs, err)
			}
			if time.Since(cs[0].LastSeen) < time.Hour {
				t.Errorf("the receiving session looks active now (last seen %v): a parallel session would be told it is taken", cs[0].LastSeen)
			}
			ds, _ := l.Decisions("/p")
			if len(ds) != 2 || ds[0].Text != "Use Postgres advisory locks, not Redis" || ds[0].Why != "one service fewer" || ds[0].Source != ledger.DecisionUser ||
				ds[1].Text != "Keep the CSV parser streaming" {
				t.Errorf("decisions after rebuild: %+v", ds)
			}
			if all, _ := l.DecisionTexts("/p"); !all["Vendor the SDK"] {
				t.Error("the dropped decision was forgotten: the extractor would bring it back")
			}
			if task, ok := l.Task("/p"); !ok || task.Text != "Finish the CSV importer" || !task.At.Equal(now.Add(-4*time.Hour)) {
				t.Errorf("pinned task after rebuild: %+v, %v", task, ok)
			}
			if ok, _ := l.HandoffTrusted("/p", "d1"); !ok {
				t.Error("published digest lost")
			}
			if hs, _ := l.Handoffs(); len(hs) != 1 || hs[0].Header != cur.Header {
				t.Errorf("current handoff after rebuild: %+v", hs)
			}
			if l.RecoveryNote() == "" {
				t.Error("no recovery note")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
