package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// TestListCachedWithoutLedger: with no ledger (no hook ever ran), the
// first `list --all --json` describes the transcripts and caches them in
// carryover's home, creating no ledger; the second reads none of them —
// every cached transcript is overwritten in place with other bytes of the
// same size and mtime first, so a read would change the listing — and
// prints the same bytes (times with their offsets included). A ledger
// made later changes nothing.
func TestListCachedWithoutLedger(t *testing.T) {
	home := t.TempDir()
	if err := os.CopyFS(home, os.DirFS("../testdata/stores/home")); err != nil {
		t.Fatal(err)
	}
	e, out, _ := manualEnv(t, map[string]string{"HOME": home}, nil)
	list := func() string {
		t.Helper()
		out.Reset()
		if err := runList(e, "", "", true, 0, true); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	cold := list()
	if _, err := os.Stat(filepath.Join(e.Home(), ledger.FileName)); !os.IsNotExist(err) {
		t.Fatalf("list made a ledger (%v)", err)
	}
	b, err := os.ReadFile(filepath.Join(e.Home(), adapters.ListCacheName))
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Entries []struct{ Path string } }
	if err := json.Unmarshal(b, &c); err != nil || len(c.Entries) < 7 {
		t.Fatalf("%d descriptions cached (%v), want at least the 7 sessions", len(c.Entries), err)
	}
	for _, en := range c.Entries {
		garble(t, en.Path)
	}
	if warm := list(); warm != cold {
		t.Errorf("the warm listing read transcripts or differs:\ncold:\n%s\nwarm:\n%s", cold, warm)
	}
	l, err := ledger.Open(e.Home())
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if withLedger := list(); withLedger != cold {
		t.Errorf("listing with a ledger differs:\n%s\nwant:\n%s", withLedger, cold)
	}
}

// garble overwrites path in place (same inode) with as many other bytes
// and puts its modification time back.
func garble(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, fi.Size())
	for i := range junk {
		junk[i] = '#'
	}
	if _, err := f.WriteAt(junk, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}
