package e2e

import (
	"strings"
	"testing"

	"github.com/carryover/carryover/cmd/e2e/agentkit"
)

// TestPiEndToEnd drives the real Pi CLI (pi -p) through the story against
// the fake Chat Completions server: its tool calls write a file, edit
// README.md and run a command that fails (bash's isError result). Pi has
// no command hooks and install writes no extension yet, so carryover reads
// the session from outside: list, handoff --source pi and handoff
// --transcript (sniffed as Pi without --source) yield the task, the failed
// command and the next action; then a Codex session in the project (cell
// Pi → Codex) receives Pi's handoff at its start.
func TestPiEndToEnd(t *testing.T) {
	w := newWorkspace(t, "pi", "codex")
	dir := w.project(t, "retrylib")
	s := story{Word: "retrypi"}
	runAgent(t, "pi", w.home, dir, s.Task(), s.turns("pi", dir), runOpts{})
	s.checkFiles(t, dir)
	ts := agentkit.PiTranscripts(w.home)
	if len(ts) != 1 {
		t.Fatalf("want one Pi session file, got %v", ts)
	}

	env := agentkit.BaseEnv(w.home)
	out, errOut, code := runCarryover(t, env, dir, "list", "--source", "pi")
	if code != 0 || !strings.Contains(out, "pi ") || !strings.Contains(out, "Add a retrypi helper") {
		t.Errorf("list --source pi (exit %d) does not show the session:\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--source", "pi", "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, s.Task()) || !strings.Contains(out, s.Next()) || !strings.Contains(out, storyFailCmd) {
		t.Errorf("handoff --source pi (exit %d):\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--transcript", ts[0], "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, "Source:** Pi") || !strings.Contains(out, s.Next()) || !strings.Contains(out, storyFailCmd) {
		t.Errorf("handoff --transcript (no --source) (exit %d):\n%s%s", code, out, errOut)
	}

	// Pi → Codex: the next Codex session's first request carries Pi's handoff.
	r := runAgent(t, "codex", w.home, dir, "continue", []agentkit.Turn{{Text: "Resuming. " + s.Next()}}, runOpts{})
	first := r.first(t)
	checkDelivered(t, first, s, "pi")
	if !strings.Contains(first, storyFailCmd) {
		t.Errorf("codex's first request lacks the failed command %q from Pi's handoff", storyFailCmd)
	}
}
