package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// TestLedgerWALStaysBounded: hook processes leave their commits in the
// ledger's WAL (ledger.Leave) instead of checkpointing on close. After a
// big first ingest and over many tool events, the WAL must stay bounded
// and every row must land.
func TestLedgerWALStaysBounded(t *testing.T) {
	dir := t.TempDir()
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "p")
	os.MkdirAll(home, 0o700)
	os.MkdirAll(project, 0o755)
	env := benchEnv(home, project)
	tr := filepath.Join(dir, "s.jsonl")
	f, err := os.Create(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	payload := map[string]any{"session_id": "wal", "transcript_path": tr, "cwd": project}
	wal := filepath.Join(home, ".carryover", ledger.FileName+"-wal")
	var lines int
	var largest int64
	for i := 0; i < 60; i++ {
		n := 40
		if i == 0 {
			n = 12000 // a first ingest big enough to write in batches (bulk mode)
		}
		var buf bytes.Buffer
		for _, l := range synthLines(t, i*10000, n) {
			buf.Write(l)
			buf.WriteByte('\n')
			lines++
		}
		f.Write(buf.Bytes())
		// Tool events only: none of these processes runs a second write
		// transaction, the one thing that lets SQLite itself reset a WAL.
		event := "PostToolUse"
		if i == 0 {
			event = "Stop"
		}
		if r := runHook(t, env, "claude", event, payload); r.Code != 0 || r.Stdout != "" {
			t.Fatalf("hook %d: %+v", i, r)
		}
		if fi, err := os.Stat(wal); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	// One hook writes about 80 KB here; Leave empties the WAL past 1 MB.
	if largest > 2<<20 {
		t.Errorf("WAL grew to %d bytes over 60 hooks", largest)
	}
	l, err := ledger.Open(filepath.Join(home, ".carryover"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := l.Session("claude", "wal")
	if err != nil {
		t.Fatal(err)
	}
	want := countRows(t, tr)
	if s.Rows != want {
		t.Errorf("ledger holds %d rows, the transcript has %d", s.Rows, want)
	}
}

// countRows is how many rows a fresh in-process ingest of the transcript
// stores.
func countRows(t *testing.T, transcript string) int {
	t.Helper()
	l, err := ledger.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, _ := adapters.Lookup("claude")
	rep, err := ledger.Ingest(l, ledger.IngestOptions{Adapter: a, Hook: adapters.Hook{Tool: "claude", SessionID: "count", TranscriptPath: transcript},
		Project: "/p", Now: time.Now(), Transcripts: []adapters.Transcript{{Path: transcript, SessionID: "count"}}})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Added
}
