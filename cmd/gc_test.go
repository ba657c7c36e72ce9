package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// TestGCCommand: `gc --dry-run` removes nothing, `gc` removes an old
// session's rows and keeps a recent one's, and `status` shows the space
// per project.
func TestGCCommand(t *testing.T) {
	e, out, _ := manualEnv(t, nil, nil)
	l, err := ledger.Open(e.Home())
	if err != nil {
		t.Fatal(err)
	}
	for name, at := range map[string]time.Time{"old": scriptNow.AddDate(-1, 0, 0), "new": scriptNow.AddDate(0, 0, -1)} {
		rows := []adapters.Row{{Key: "1", Time: at, Role: "user", Kind: adapters.KindPrompt, Text: strings.Repeat("x", 5000)}}
		if _, err := l.Write(ledger.Batch{Session: ledger.SessionRef{Tool: "claude", NativeID: name, Project: "/p"}, Rows: rows}, at); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	if err := runGC(e, "180d", "", true, false, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "would remove the rows of 1 sessions") {
		t.Errorf("dry run: %s", out)
	}
	out.Reset()
	if err := runGC(e, "180d", "", false, false, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "removed the rows of 1 sessions last active over 180d ago (1 rows)") {
		t.Errorf("gc: %s", out)
	}
	if err := runGC(e, "soon", "", false, false, false); err == nil {
		t.Error("a bad --older-than accepted")
	}
	st := collectStatus(e, true)
	if st.Ledger.Space == nil || len(st.Ledger.Space.Projects) != 1 || st.Ledger.Space.Projects[0].Rows != 1 || st.Ledger.Rows != 1 {
		t.Fatalf("status space: %+v", st.Ledger)
	}
	out.Reset()
	printStatus(e, st)
	if !strings.Contains(out.String(), "/p: 2 sessions, 1 rows") {
		t.Errorf("status:\n%s", out)
	}
}
