package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/cmd/e2e/agentkit"
)

// TestQwenEndToEnd drives the real Qwen Code CLI headless through the story
// against the fake Chat Completions server: its tool calls create a file,
// edit README.md and run a command that fails (exit 2), carryover's
// SessionStart and Stop hooks run (SessionEnd does not fire in headless
// runs, 0.24.4), the handoff is written from the chats JSONL, and a fresh
// Qwen session's first model request carries it (SessionStart's
// additionalContext lands in the system prompt).
func TestQwenEndToEnd(t *testing.T) {
	w := newWorkspace(t, "qwen")
	dir := w.project(t, "backofflib")
	s := story{Word: "backoffq"}
	runAgent(t, "qwen", w.home, dir, s.Task(), s.turns("qwen", dir), runOpts{})
	s.checkFiles(t, dir)
	runs := w.hookRuns()
	for _, ev := range []string{"SessionStart", "Stop"} {
		if runs["qwen "+ev] == 0 {
			t.Errorf("carryover's %s hook did not run; ran: %v", ev, runs)
		}
	}
	if runs["qwen SessionEnd"] != 0 {
		t.Logf("SessionEnd fired in a headless run (it did not in 0.24.4)")
	}
	if ts := agentkit.QwenTranscripts(w.home); len(ts) != 1 {
		t.Fatalf("want one Qwen chat file, got %v", ts)
	}
	h := w.handoff(t, dir)
	s.checkHandoff(t, h, "qwen")
	// Qwen Code's start injection works: no pointer block, no QWEN.md (issue 24).
	for _, f := range []string{"AGENTS.md", "QWEN.md"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was written although Qwen Code's start injection works:\n%s", f, b)
		}
	}

	// `carryover list` and `handoff --transcript` read the same session.
	env := agentkit.BaseEnv(w.home)
	out, errOut, code := runCarryover(t, env, dir, "list", "--source", "qwen")
	if code != 0 || !strings.Contains(out, "Add a backoffq helper") {
		t.Errorf("list --source qwen (exit %d) does not show the session:\n%s%s", code, out, errOut)
	}
	ts := agentkit.QwenTranscripts(w.home)
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--transcript", ts[0], "--source", "qwen", "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, s.Next()) || !strings.Contains(out, storyFailCmd) {
		t.Errorf("handoff --transcript --source qwen (exit %d):\n%s%s", code, out, errOut)
	}

	// Session 2: a fresh session gets it through SessionStart.
	r := runAgent(t, "qwen", w.home, dir, "continue", []agentkit.Turn{{Text: "Resuming. " + s.Next()}}, runOpts{})
	checkDelivered(t, r.first(t), s, "qwen")
}
