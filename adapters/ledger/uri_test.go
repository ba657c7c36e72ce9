package ledger_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/carryover/carryover/adapters/ledger"
)

// TestOpenInOddHome: a carryover home whose path holds URI syntax ('#', '?',
// '%', spaces) stores the ledger in exactly that directory, and nothing
// appears beside it (before the fix SQLite opened "…/x" for "…/x#y/ledger.sqlite"
// and wrote a second database there).
func TestOpenInOddHome(t *testing.T) {
	for _, name := range []string{"a b", "x#frag", "q?mode=memory", "pct%41", "all #?% of it"} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			home := filepath.Join(root, name)
			if err := os.Mkdir(home, 0o700); err != nil {
				t.Fatal(err)
			}
			l, err := ledger.Open(home)
			if err != nil {
				t.Fatal(err)
			}
			tr := filepath.Join(home, "s1.jsonl")
			copyFixture(t, tr)
			if rep := ingest(t, l, tr); rep.Added == 0 {
				t.Fatal("nothing ingested")
			}
			l.Close()
			// The rows are in the file at home, read back through a fresh open.
			l, err = ledger.Open(home)
			if err != nil {
				t.Fatal(err)
			}
			s, err := l.Session("claude", "s1")
			l.Close()
			if err != nil || s.Rows == 0 {
				t.Fatalf("reopened ledger lost the session: %+v, %v", s, err)
			}
			if fi, err := os.Stat(filepath.Join(home, ledger.FileName)); err != nil || fi.Size() == 0 {
				t.Fatalf("ledger file at home: %v, %v", fi, err)
			}
			entries, _ := os.ReadDir(root)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, []string{name}) {
				t.Errorf("files beside the home: %v", names)
			}
			if got := ledger.Salvage(filepath.Join(home, ledger.FileName)); len(got) == 0 {
				t.Errorf("Salvage read nothing from the ledger in %q", name)
			}
		})
	}
}
