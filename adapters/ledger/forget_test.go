package ledger_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
