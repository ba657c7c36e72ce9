package ledger_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// TestCatchUpEveryGrownTranscript: a catch-up with no deadline re-reads every
// tracked transcript of the project that grew, however many (it used to stop
// at 8), and none of another project's.
func TestCatchUpEveryGrownTranscript(t *testing.T) {
	dir := t.TempDir()
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, _ := adapters.Lookup("claude")
	data, err := os.ReadFile("../../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range 12 {
		project := "/p"
		if i == 11 {
			project = "/other"
		}
		tr := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		// Registered before the agent wrote anything (Copilot's late flush).
		os.WriteFile(tr, nil, 0o600)
		if _, err := ledger.Ingest(l, ledger.IngestOptions{Adapter: a, Hook: adapters.Hook{SessionID: fmt.Sprintf("s%d", i), TranscriptPath: tr}, Project: project, Now: now}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, tr)
	}
	for _, p := range paths {
		os.WriteFile(p, data, 0o600)
	}
	caught, err := ledger.CatchUp(l, "/p", map[string]bool{paths[0]: true}, ledger.IngestOptions{Project: "/p", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(caught) != 10 {
		t.Fatalf("caught up %d transcripts, want 10 (11 of /p minus the skipped one)", len(caught))
	}
	for _, f := range caught {
		if f.Err != nil || f.Added == 0 {
			t.Errorf("%s: added %d, err %v", f.Path, f.Added, f.Err)
		}
	}
}
