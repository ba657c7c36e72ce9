package ledger_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish/redact"
)

// TestIngestRedactsFilePaths: a secret can be a file name (a token pasted as
// a directory, a key saved under its own value); the path column is redacted
// like the text and command columns.
func TestIngestRedactsFilePaths(t *testing.T) {
	dir := t.TempDir()
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tok := "ghp_" + strings.Repeat("Ab3dE", 7) + "9"
	line := `{"type":"assistant","uuid":"a1","sessionId":"s1","timestamp":"2026-11-21T08:00:01Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/tmp/` + tok + `/notes.txt","content":"x"}}]}}` + "\n"
	tr := filepath.Join(dir, "s1.jsonl")
	os.WriteFile(tr, []byte(line), 0o600)
	a, _ := adapters.Lookup("claude")
	if _, err := ledger.Ingest(l, ledger.IngestOptions{Adapter: a, Hook: adapters.Hook{Tool: "claude", SessionID: "s1", TranscriptPath: tr}, Project: "/p", Now: now, Redact: redact.String}); err != nil {
		t.Fatal(err)
	}
	s, _ := l.Session("claude", "s1")
	rows, _ := l.Rows(s.ID, 100)
	found := false
	for _, r := range rows {
		if r.FilePath != "" {
			found = true
			if strings.Contains(r.FilePath, tok[:12]) || !strings.Contains(r.FilePath, "[REDACTED:github-token]") {
				t.Errorf("file path stored as %q", r.FilePath)
			}
		}
	}
	if !found {
		t.Fatal("no row with a file path")
	}
}
