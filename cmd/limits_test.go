package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHookLimit: Claude Code's StopFailure after a usage limit writes
// RESUME.md, tells the user through systemMessage (never the clipboard),
// and the next session in the project, of another agent, gets the handoff
// with the limit line.
func TestHookLimit(t *testing.T) {
	project := t.TempDir()
	e, out := hookEnv(t, project)
	e.Clipboard = func(string) error { t.Error("a hook touched the clipboard"); return nil }
	src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	limitLine := `{"parentUuid":null,"isSidechain":false,"type":"assistant","uuid":"lim-1","timestamp":"2026-11-21T09:30:00.000Z","message":{"id":"m-lim","model":"<synthetic>","role":"assistant","type":"message","usage":{"input_tokens":0,"output_tokens":0},"content":[{"type":"text","text":"You've hit your limit · resets 2pm (Europe/Paris)"}]},"error":"rate_limit","isApiErrorMessage":true,"sessionId":"s1"}` + "\n"
	tr := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(tr, append(src, limitLine...), 0o600)
	runSnap(e, "StopFailure", map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": project,
		"error": "rate_limit", "last_assistant_message": "You've hit your limit · resets 2pm (Europe/Paris)"})
	var got struct {
		SystemMessage string `json:"systemMessage"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("stdout is not the hook JSON: %q", out.String())
	}
	want := "carryover: usage limit reached (resets 2pm (Europe/Paris)). Resume prompt ready: .carryover/RESUME.md — paste it into another agent, or run: carryover handoff"
	if got.SystemMessage != want {
		t.Errorf("systemMessage = %q; want %q", got.SystemMessage, want)
	}
	resume, err := os.ReadFile(filepath.Join(project, ".carryover", "RESUME.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resume), "retry") {
		t.Errorf("RESUME.md lacks the task:\n%s", resume)
	}
	// The next Stop of the same session does not announce it again.
	out.Reset()
	runSnap(e, "Stop", map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": project})
	if out.Len() != 0 {
		t.Errorf("announced twice: %s", out.String())
	}
	st := collectStatus(e, false)
	if len(st.Walls.Last) != 1 || st.Walls.Last[0].Tool != "claude" || st.Walls.Last[0].Resets != "2pm (Europe/Paris)" || st.Walls.Thresholds != [3]int{65, 75, 85} {
		t.Errorf("status limits = %+v", st.Walls)
	}
	// A Codex session starts in the project: the handoff with the limit line.
	out.Reset()
	b, _ := json.Marshal(map[string]any{"session_id": "c1", "transcript_path": nil, "cwd": project, "source": "startup", "hook_event_name": "SessionStart"})
	e.Stdin = bytes.NewReader(b)
	Snapshot(e, "codex", "SessionStart")
	if !strings.Contains(out.String(), "the previous Claude Code session stopped at a usage limit (it resets 2pm (Europe/Paris))") {
		t.Errorf("the next session's injection lacks the limit line: %s", out.String())
	}
}
