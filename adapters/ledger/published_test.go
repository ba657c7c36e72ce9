package ledger

import (
	"testing"
	"time"
)

// TestRecordPublished: one transaction stores what the three calls it
// replaces stored: the digest (trusted), the current handoff, the record
// under its id, and the end of the handoff it supersedes.
func TestRecordPublished(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	first := Published{Handoff: Handoff{Project: "/p", Header: "# h1", Tool: "claude", SessionID: 1, Written: t0, Hash: "d1"},
		Record: HandoffRecord{ID: "HO-20261101-120000-a", Project: "/p", Tool: "claude", SessionID: 1, Hash: "d1", Written: t0, Updated: t0}}
	if err := l.RecordPublished(first); err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Hour)
	second := Published{Handoff: Handoff{Project: "/p", Header: "# h2", Tool: "codex", SessionID: 2, Written: t1, Hash: "d2"},
		Record:     HandoffRecord{ID: "HO-20261101-130000-b", Project: "/p", Tool: "codex", SessionID: 2, Hash: "d2", Written: t1, Updated: t1},
		Supersedes: first.Record.ID}
	if err := l.RecordPublished(second); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"d1", "d2"} {
		if ok, err := l.HandoffTrusted("/p", d); !ok || err != nil {
			t.Errorf("digest %s not trusted: %v", d, err)
		}
	}
	if hs, err := l.Handoffs(); err != nil || len(hs) != 1 || hs[0].Header != "# h2" {
		t.Errorf("current handoff: %+v, %v", hs, err)
	}
	old, err := l.HandoffRecordByID(first.Record.ID)
	if err != nil || old.Ended != EndSuperseded || !old.EndedAt.Equal(t1) {
		t.Errorf("superseded record: %+v, %v", old, err)
	}
	if cur, err := l.HandoffRecordByID(second.Record.ID); err != nil || cur.Ended != "" || cur.Hash != "d2" {
		t.Errorf("current record: %+v, %v", cur, err)
	}
}
