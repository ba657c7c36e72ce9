package cmd

import (
	"path/filepath"
	"testing"

	"github.com/carryover/carryover/adapters/ledger"
)

// TestListCachedSameOutput: with a ledger, the first `list --all --json`
// describes the transcripts and caches them; the second answers from the
// cache and prints the same bytes (times with their offsets included).
func TestListCachedSameOutput(t *testing.T) {
	home, _ := filepath.Abs("../testdata/stores/home")
	e, out, _ := manualEnv(t, map[string]string{"HOME": home}, nil)
	if err := runList(e, "", "", true, 0, true); err != nil {
		t.Fatal(err)
	}
	noLedger := out.String()
	l, err := ledger.Open(e.Home())
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	var runs []string
	for i := 0; i < 2; i++ {
		out.Reset()
		if err := runList(e, "", "", true, 0, true); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, out.String())
	}
	if runs[0] != noLedger || runs[1] != noLedger {
		t.Errorf("cached listing differs:\nwithout ledger:\n%s\ncold:\n%s\nwarm:\n%s", noLedger, runs[0], runs[1])
	}
	l, _ = ledger.Open(e.Home())
	defer l.Close()
	d, err := l.Descriptions()
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() < 7 {
		t.Errorf("%d descriptions cached, want at least the 7 sessions", d.Len())
	}
}
