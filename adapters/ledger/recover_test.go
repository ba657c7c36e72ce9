package ledger_test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// buildLedger makes a ledger in dir tracking two transcripts of /p and
// returns their paths.
func buildLedger(t *testing.T, dir string) (string, string) {
	t.Helper()
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := adapters.Lookup("claude")
	var paths []string
	for _, sid := range []string{"s1", "s2"} {
		tr := filepath.Join(dir, sid+".jsonl")
		copyFixture(t, tr)
		paths = append(paths, tr)
		if _, err := ledger.Ingest(l, ledger.IngestOptions{Adapter: a, Hook: adapters.Hook{SessionID: sid, TranscriptPath: tr}, Project: "/p", Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	return paths[0], paths[1]
}

// TestRebuildAfterDamage: for each kind of damage, Open (or Reopen, for
// damage only a later statement sees) moves the file aside, registers the
// old ledger's transcripts at offset 0, and CatchUp re-reads them whole.
func TestRebuildAfterDamage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(path string)
		reopen bool // the damage is only noticed after Open
	}{
		{name: "garbage-header", damage: func(p string) {
			b := make([]byte, 100)
			rand.Read(b)
			f, _ := os.OpenFile(p, os.O_WRONLY, 0)
			f.WriteAt(b, 0)
			f.Close()
		}},
		{name: "reopen-after-statement", reopen: true, damage: func(string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s1, _ := buildLedger(t, dir)
			path := filepath.Join(dir, ledger.FileName)
			tc.damage(path)
			l, err := ledger.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.reopen {
				if l.Recovered {
					t.Fatal("an intact ledger was taken for damaged")
				}
				if l, err = l.Reopen(); err != nil {
					t.Fatal(err)
				}
			}
			defer l.Close()
			if !l.Recovered || l.Rebuilt != 2 {
				t.Fatalf("recovered=%v rebuilt=%d, want 2 transcripts", l.Recovered, l.Rebuilt)
			}
			if _, err := os.Stat(l.MovedTo); err != nil {
				t.Fatalf("damaged ledger not kept: %v", err)
			}
			a, _ := adapters.Lookup("claude")
			caught, err := ledger.CatchUp(l, "/p", nil, ledger.IngestOptions{Adapter: a, Project: "/p", Now: now})
			if err != nil || len(caught) != 2 {
				t.Fatalf("catch-up read %d files: %v", len(caught), err)
			}
			fresh, _ := ledger.Open(t.TempDir())
			defer fresh.Close()
			want := ingest(t, fresh, s1).Added
			for _, sid := range []string{"s1", "s2"} {
				s, err := l.Session("claude", sid)
				if err != nil || s.Rows != want || s.Project != "/p" {
					t.Errorf("%s after rebuild: %+v %v (want %d rows)", sid, s, err, want)
				}
			}
		})
	}
}

// TestConcurrentRecovery: hooks that all find the ledger damaged move it
// aside once; none moves another's new ledger.
func TestConcurrentRecovery(t *testing.T) {
	dir := t.TempDir()
	buildLedger(t, dir)
	os.WriteFile(filepath.Join(dir, ledger.FileName), []byte("garbage that is long enough to not be a database file at all, really"), 0o600)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := ledger.Open(dir)
			if err != nil {
				t.Error(err)
				return
			}
			l.Close()
		}()
	}
	wg.Wait()
	moved, _ := filepath.Glob(filepath.Join(dir, ledger.FileName+".corrupt-*[0-9]"))
	if len(moved) != 1 {
		t.Fatalf("moved aside %d times: %v", len(moved), moved)
	}
}

func TestSalvageUnreadable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x")
	os.WriteFile(p, []byte("nothing here"), 0o600)
	if got := ledger.Salvage(p); len(got) != 0 {
		t.Fatalf("salvaged %v from garbage", got)
	}
	if got := ledger.Salvage(p + "-missing"); len(got) != 0 {
		t.Fatalf("salvaged %v from nothing", got)
	}
}
