package ledger_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func ingest(t *testing.T, l *ledger.Ledger, transcript string) ledger.IngestReport {
	t.Helper()
	a, _ := adapters.Lookup("claude")
	h := adapters.Hook{Tool: "claude", SessionID: "s1", TranscriptPath: transcript}
	rep, err := ledger.Ingest(l, ledger.IngestOptions{Adapter: a, Hook: h, Project: "/p", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func copyFixture(t *testing.T, dst string) {
	b, err := os.ReadFile("../../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dst, b, 0o600)
}

func TestIngestIdempotentAndIncremental(t *testing.T) {
	dir := t.TempDir()
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tr := filepath.Join(dir, "s1.jsonl")
	copyFixture(t, tr)
	first := ingest(t, l, tr)
	if first.Added == 0 {
		t.Fatal("nothing ingested")
	}
	if again := ingest(t, l, tr); again.Added != 0 {
		t.Fatalf("re-running on the same bytes added %d rows", again.Added)
	}
	// Forget the cursor by replacing the file with identical content under
	// a new inode: everything is re-read, nothing duplicated.
	os.Rename(tr, tr+".old")
	copyFixture(t, tr)
	if rep := ingest(t, l, tr); rep.Added != 0 || !rep.Files[0].Reset {
		t.Fatalf("re-read after replacement added %d (reset=%v)", rep.Added, rep.Files[0].Reset)
	}
	s, err := l.Session("claude", "s1")
	if err != nil || s.Rows != first.Added || s.Project != "/p" {
		t.Fatalf("session = %+v, %v", s, err)
	}
	rows, _ := l.Rows(s.ID, 1000)
	if len(rows) != first.Added {
		t.Fatalf("rows = %d", len(rows))
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].Seq <= rows[i-1].Seq {
			t.Fatal("rows out of sequence")
		}
	}
	// The ledger keeps history after the agent deletes its transcript.
	os.Remove(tr)
	ingest(t, l, tr)
	if rows2, _ := l.Rows(s.ID, 1000); len(rows2) != len(rows) {
		t.Fatal("rows lost after the transcript was deleted")
	}
}

func TestMissingTranscriptIsNormal(t *testing.T) {
	dir := t.TempDir()
	l, _ := ledger.Open(dir)
	defer l.Close()
	rep := ingest(t, l, filepath.Join(dir, "not-yet.jsonl"))
	if rep.Added != 0 {
		t.Fatal("rows from nowhere")
	}
	tracked, _ := l.Tracked("/p", 5)
	if len(tracked) != 1 {
		t.Fatalf("a new session's transcript path must be tracked for catch-up: %+v", tracked)
	}
}

func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "s1.jsonl")
	copyFixture(t, tr)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := ledger.Open(dir)
			if err != nil {
				errs <- err
				return
			}
			defer l.Close()
			a, _ := adapters.Lookup("claude")
			_, err = ledger.Ingest(l, ledger.IngestOptions{Adapter: a, Hook: adapters.Hook{SessionID: "s1", TranscriptPath: tr}, Project: "/p", Now: now})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	l, _ := ledger.Open(dir)
	defer l.Close()
	s, _ := l.Session("claude", "s1")
	rows, _ := l.Rows(s.ID, 10000)
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.Key] {
			t.Fatalf("duplicate row %s", r.Key)
		}
		seen[r.Key] = true
	}
	want := len(rows)
	fresh, _ := ledger.Open(t.TempDir())
	defer fresh.Close()
	if n := ingest(t, fresh, tr).Added; n != want {
		t.Fatalf("concurrent ingest stored %d rows, a single one %d", want, n)
	}
}

func TestCorruptLedgerMovedAside(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ledger.FileName), []byte("this is not a database, just garbage bytes......................................................................"), 0o600)
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.Recovered {
		t.Fatal("corruption not detected")
	}
	if _, err := os.Stat(l.MovedTo); err != nil {
		t.Fatalf("corrupt ledger not kept: %v", err)
	}
}

func TestPendingInjectOnce(t *testing.T) {
	l, _ := ledger.Open(t.TempDir())
	defer l.Close()
	l.MarkPendingInject(7, now)
	if ok, _ := l.TakePendingInject(7); !ok {
		t.Fatal("pending injection lost")
	}
	if ok, _ := l.TakePendingInject(7); ok {
		t.Fatal("pending injection delivered twice")
	}
}

func TestSaveStateOptimistic(t *testing.T) {
	l, _ := ledger.Open(t.TempDir())
	defer l.Close()
	if ok, err := l.SaveState("/p", []byte("s1"), ledger.Seqs{1: 5}, "", now); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, _ := l.SaveState("/p", []byte("other"), ledger.Seqs{1: 3}, "", now); ok {
		t.Fatal("a second first save must not overwrite")
	}
	_, _, v1, _ := l.LoadState("/p")
	_, _, v2, _ := l.LoadState("/p")
	if ok, _ := l.SaveState("/p", []byte("s2"), ledger.Seqs{1: 9}, v1, now); !ok {
		t.Fatal("save from the current version refused")
	}
	if ok, _ := l.SaveState("/p", []byte("stale"), ledger.Seqs{1: 7}, v2, now); ok {
		t.Fatal("a stale save overwrote a newer state")
	}
	st, seqs, _, _ := l.LoadState("/p")
	if string(st) != "s2" || seqs[1] != 9 {
		t.Fatalf("state = %s %v", st, seqs)
	}
}
