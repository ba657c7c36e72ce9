package ledger_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// claudeLines is a small Claude Code transcript whose prompt and reply
// carry word.
func claudeLines(session, word string) string {
	var b strings.Builder
	for i, m := range []struct{ typ, content string }{
		{"user", `"Please rename the ` + word + ` module and keep its tests green"`},
		{"assistant", `[{"type":"text","text":"I renamed ` + word + `; the tests pass. We decided to keep ` + word + ` as the public name."}]`},
	} {
		fmt.Fprintf(&b, `{"type":%q,"message":{"role":%q,"content":%s},"uuid":"%s-%d","timestamp":"2026-11-21T08:59:3%d.000Z","cwd":"/p","sessionId":%q}`+"\n",
			m.typ, m.typ, m.content, session, i, i, session)
	}
	return b.String()
}

// TestForgetLeavesNoTrace: after Forget, the session's words are in
// neither the ledger file nor its WAL, its handoff record says forgotten,
// and the other session of the project is untouched.
func TestForgetLeavesNoTrace(t *testing.T) {
	dir := t.TempDir()
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, _ := adapters.Lookup("claude")
	for _, s := range []struct{ id, word string }{{"sess-keep", "Marmalade"}, {"sess-gone", "Quetzalcoatlus"}} {
		tr := filepath.Join(dir, s.id+".jsonl")
		os.WriteFile(tr, []byte(claudeLines(s.id, s.word)), 0o600)
		h := adapters.Hook{Tool: "claude", SessionID: s.id, TranscriptPath: tr}
		if rep, err := ledger.Ingest(l, ledger.IngestOptions{Adapter: a, Hook: h, Project: "/p", Now: now}); err != nil || rep.Added == 0 {
			t.Fatalf("ingest %s: %+v %v", s.id, rep, err)
		}
		os.Remove(tr) // only the ledger holds it now
	}
	gone, err := l.Session("claude", "sess-gone")
	if err != nil {
		t.Fatal(err)
	}
	l.RecordDelivery(ledger.Delivery{Project: "/p", Header: "# [CARRYOVER] x", Tool: "claude", SessionID: gone.ID, Via: "hook", At: now})
	l.AddDecision("/p", ledger.Decision{Text: "keep Quetzalcoatlus as the public name", Source: ledger.DecisionExtracted, At: now})
	l.AddDecision("/p", ledger.Decision{Text: "tabs, not spaces", Source: ledger.DecisionUser, At: now})
	l.SaveHandoffRecord(ledger.HandoffRecord{ID: "HO-20261121-085930-sess-gon", Project: "/p", Tool: "claude", SessionID: gone.ID, NativeID: "sess-gone",
		Goal: "rename Quetzalcoatlus", Written: now, Updated: now})

	ss, err := l.FindSessions("sess-go")
	if err != nil || len(ss) != 1 || ss[0].ID != gone.ID {
		t.Fatalf("FindSessions by prefix = %+v, %v", ss, err)
	}
	if err := l.Forget(ss[0]); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{ledger.FileName, ledger.FileName + "-wal"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		for _, w := range []string{"Quetzalcoatlus", "sess-gone"} {
			if bytes.Contains(b, []byte(w)) {
				t.Errorf("%s still holds %q", f, w)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ledger.FileName)); !bytes.Contains(b, []byte("Marmalade")) {
		t.Errorf("the other session's rows went too")
	}
	if _, err := l.Session("claude", "sess-gone"); err == nil {
		t.Errorf("the session is still there")
	}
	recs, _ := l.HandoffRecords("/p", -1)
	if len(recs) != 1 || recs[0].Ended != ledger.EndForgotten || recs[0].Goal != "" {
		t.Errorf("handoff records = %+v", recs)
	}
	if ds, _ := l.Decisions("/p"); len(ds) != 1 || ds[0].Source != ledger.DecisionUser {
		t.Errorf("decisions = %+v", ds)
	}
	if l.ForgottenCount() != 1 {
		t.Errorf("ForgottenCount = %d", l.ForgottenCount())
	}
}

// TestMissedInjections: a hook receipt whose session replied afterwards
// without a transcript receipt is a missed injection; one with the
// transcript receipt, or whose session has not replied since, is not.
func TestMissedInjections(t *testing.T) {
	dir := t.TempDir()
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, _ := adapters.Lookup("claude")
	tr := filepath.Join(dir, "s.jsonl")
	os.WriteFile(tr, []byte(claudeLines("s-1", "Okapi")), 0o600)
	ledger.Ingest(l, ledger.IngestOptions{Adapter: a, Hook: adapters.Hook{Tool: "claude", SessionID: "s-1", TranscriptPath: tr}, Project: "/p", Now: now})
	s, _ := l.Session("claude", "s-1")
	before := time.Date(2026, 11, 21, 8, 59, 0, 0, time.UTC) // the transcript's reply is at 08:59:31
	l.RecordDelivery(ledger.Delivery{Project: "/p", Header: "# [CARRYOVER] a", Tool: "claude", SessionID: s.ID, Via: "hook", At: before})
	if got, _ := l.MissedInjections("/p"); len(got) != 1 || got[0] != "claude" {
		t.Errorf("missed = %v, want [claude]", got)
	}
	l.RecordDelivery(ledger.Delivery{Project: "/p", Header: "# [CARRYOVER] a", Tool: "claude", SessionID: s.ID, Via: "transcript", At: now})
	l.RecordDelivery(ledger.Delivery{Project: "/p", Header: "# [CARRYOVER] b", Tool: "claude", SessionID: s.ID, Via: "hook", At: now}) // no reply since
	if got, _ := l.MissedInjections("/p"); len(got) != 0 {
		t.Errorf("missed = %v, want none", got)
	}
}
