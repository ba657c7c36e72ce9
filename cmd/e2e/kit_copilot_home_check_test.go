package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCopilotHomeEnv checks that $COPILOT_HOME replaces ~/.copilot for both
// user-level hooks and session state.
func TestCopilotHomeEnv(t *testing.T) {
	bin := Install(t, "copilot-cli")
	home := t.TempDir()
	copilotHome := filepath.Join(t.TempDir(), "copilot-home")
	proj := filepath.Join(t.TempDir(), "homeq")
	gcGitRepo(t, proj, map[string]string{"a.txt": "x\n"})
	hookLog := filepath.Join(t.TempDir(), "hooks.jsonl")
	if err := WriteCopilotHooksIn(copilotHome, copilotHookSet(hookLog, copilotHome)); err != nil {
		t.Fatal(err)
	}
	srv := NewChatServer(t, []Turn{{Text: "Hello. " + gcNext}})
	out := RunCopilot(t, CopilotOpts{Bin: bin, Home: home, Dir: proj, BaseURL: srv.URL(), Prompt: "Say hello",
		Env: []string{"COPILOT_HOME=" + copilotHome}})
	if out.ExitCode != 0 {
		t.Fatalf("copilot exited %d\nstderr:\n%s", out.ExitCode, out.Stderr)
	}
	if !srv.Contains(gcMarker) {
		t.Errorf("the sessionStart hook in $COPILOT_HOME/hooks did not inject %s", gcMarker)
	}
	entries := gcReadHookLog(t, hookLog)
	ss, ok := gcFirst(entries, "sessionStart")
	if !ok {
		t.Fatalf("the hook in $COPILOT_HOME/hooks did not fire")
	}
	if _, err := os.Stat(CopilotEventsPath(copilotHome, gcField(ss, "sessionId"))); err != nil {
		t.Errorf("session state is not under $COPILOT_HOME: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".copilot", "session-state")); err == nil {
		t.Errorf("session state was also written under ~/.copilot despite $COPILOT_HOME")
	}
	for _, e := range entries {
		if e.Event == "agentStop" {
			if tp := gcField(e, "transcriptPath"); tp != CopilotEventsPath(copilotHome, gcField(ss, "sessionId")) {
				t.Errorf("agentStop transcriptPath = %q, want it under $COPILOT_HOME", tp)
			}
		}
	}
}
