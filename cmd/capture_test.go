package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/carryover/carryover/publish/resume"
)

// TestCaptureSessionJSON: capture on a bundled sample writes a session.json
// that validates, carries the PRD fields and renders again.
func TestCaptureSessionJSON(t *testing.T) {
	project := t.TempDir()
	e, _, errb := manualEnv(t, nil, nil)
	sel := selection{transcript: "../testdata/adapters/claude/session-tools.jsonl", source: "claude", project: project}
	sel.transcript, _ = filepath.Abs(sel.transcript)
	if err := runCapture(e, sel, false); err != nil {
		t.Fatalf("%v (%s)", err, errb)
	}
	l, err := resume.LoadFile(filepath.Join(project, ".carryover", "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := l.Session
	if s == nil || s.Version != "1.0" || s.Source != "claude" || s.SessionID != "4fbd56c9-cd10-4412-a9cc-58af839aaddf" {
		t.Fatalf("%+v", s)
	}
	if s.Task.Description == "" || s.Conversation.MessageCount == 0 || s.Conversation.EstimatedTokens == 0 || len(s.FilesChanged) == 0 || len(s.Blockers) == 0 {
		t.Errorf("incomplete: task=%q messages=%d tokens=%d files=%d blockers=%d", s.Task.Description, s.Conversation.MessageCount, s.Conversation.EstimatedTokens, len(s.FilesChanged), len(s.Blockers))
	}
	for _, m := range s.Conversation.Messages {
		if m.TokenCount == 0 || m.Timestamp == "" {
			t.Errorf("message without tokenCount/timestamp: %+v", m)
			break
		}
	}
	if fi, err := os.Stat(filepath.Join(project, ".carryover", "session.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("session.json mode: %v %v", fi.Mode(), err)
	}
	if _, err := resume.Build(*s, resume.Options{Target: "cursor"}); err != nil {
		t.Error(err)
	}
}
