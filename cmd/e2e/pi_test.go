package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPiEndToEnd drives the real Pi CLI (pi -p) with the extension
// `carryover install` writes. Install and uninstall first leave the user's
// ~/.pi byte for byte as it was (their own extension and settings beside
// carryover's). Then the story runs against the fake Chat Completions
// server (a file written, README.md edited, a failing bash call): the
// extension relays SessionStart and Stop to `carryover snapshot`, the Stop
// writes the handoff; a Codex session in the project receives it at its
// start (cell Pi → Codex); a next Pi session receives the current handoff
// through before_agent_start (a custom_message reaching the model). Reading
// from outside still works: list, handoff --source pi, --transcript.
// `doctor` runs the extension's commands; the final uninstall removes the
// extension and nothing of the user's.
func TestPiEndToEnd(t *testing.T) {
	w := newWorkspace(t, "codex")
	dir := w.project(t, "retrylib")
	bin := Install(t, "pi")
	env := append(BaseEnv(w.home), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	agentDir := filepath.Join(w.home, ".pi", "agent")
	userExt := filepath.Join(agentDir, "extensions", "mine.ts")
	writeFile(t, userExt, "export default function (_pi: any) {}\n", 0o644)
	writeFile(t, filepath.Join(agentDir, "settings.json"), "{\n  \"quietStartup\": true\n}\n", 0o600)
	before := treeOf(t, filepath.Join(w.home, ".pi"))

	ext := filepath.Join(agentDir, "extensions", "carryover.ts")
	installed := installAndUndo(t, env, dir, "pi", filepath.Join(w.home, ".pi"), before, "Pi 0.73.1: 4 hooks")
	if b, err := os.ReadFile(ext); err != nil || !strings.Contains(string(b), `const CARRYOVER = "`+carryoverBin+`"`) {
		t.Fatalf("install did not write the extension %s (%v):\n%s", ext, err, installed)
	}
	if out, _, _ := runCarryover(t, env, dir, "doctor"); !strings.Contains(out, "✓ Pi: 4 hooks ran") {
		t.Errorf("doctor does not prove Pi's extension:\n%s", out)
	}

	s := story{Word: "retrypi"}
	runAgent(t, "pi", w.home, dir, s.Task(), s.turns("pi", dir), runOpts{})
	s.checkFiles(t, dir)
	runs := w.hookRuns()
	for _, ev := range []string{"SessionStart", "Stop"} {
		if runs["pi "+ev] == 0 {
			t.Errorf("the extension did not relay %s; runs: %v\n%s", ev, runs, w.log())
		}
	}
	t.Logf("hook runs after the Pi session: %v", runs)
	s.checkHandoff(t, w.handoff(t, dir), "pi")
	ts := PiTranscripts(w.home)
	if len(ts) != 1 {
		t.Fatalf("want one Pi session file, got %v", ts)
	}
	out, errOut, code := runCarryover(t, env, dir, "list", "--source", "pi")
	if code != 0 || !strings.Contains(out, "Add a retrypi helper") {
		t.Errorf("list --source pi (exit %d) does not show the session:\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--transcript", ts[0], "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, "Source:** Pi") || !strings.Contains(out, s.Next()) || !strings.Contains(out, storyFailCmd) {
		t.Errorf("handoff --transcript (no --source) (exit %d):\n%s%s", code, out, errOut)
	}

	// Pi → Codex: the next Codex session's first request carries Pi's handoff.
	r := runAgent(t, "codex", w.home, dir, "continue", []Turn{{Text: "Resuming. " + s.Next()}}, runOpts{})
	first := r.first(t)
	checkDelivered(t, first, s, "pi")
	if !strings.Contains(first, storyFailCmd) {
		t.Errorf("codex's first request lacks the failed command %q from Pi's handoff", storyFailCmd)
	}

	// Pi receives: the project's current handoff reaches the model in the
	// next Pi session's first request, once.
	task := handoffTask(t, w.handoff(t, dir))
	r = runAgent(t, "pi", w.home, dir, "continue", []Turn{{Text: "Resuming."}}, runOpts{})
	first = r.first(t)
	if !strings.Contains(first, "[CARRYOVER]") || !strings.Contains(first, task) || handoffCount(first) != 1 {
		t.Errorf("the next Pi session's first request lacks the handoff (task %q) or carries it %d times:\n%.3000s", task, handoffCount(first), first)
	}
	ts = PiTranscripts(w.home)
	if b, _ := os.ReadFile(ts[len(ts)-1]); !strings.Contains(string(b), `"customType":"carryover"`) {
		t.Errorf("the Pi session %s stores no carryover custom_message", ts[len(ts)-1])
	}

	out, errOut, code = runCarryover(t, env, dir, "uninstall", "--tools", "pi")
	if code != 0 || !strings.Contains(out, "removed  Pi") {
		t.Errorf("uninstall --tools pi (exit %d):\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(ext); !os.IsNotExist(err) {
		t.Errorf("uninstall left %s (%v)", ext, err)
	}
	after := treeOf(t, filepath.Join(w.home, ".pi"))
	for _, p := range []string{"agent/extensions/mine.ts", "agent/settings.json"} {
		if before[p] != after[p] {
			t.Errorf("the user's %s changed: %q → %q", p, before[p], after[p])
		}
	}
}

// handoffTask is the first line of a handoff's Task section.
func handoffTask(t *testing.T, h string) string {
	t.Helper()
	_, rest, ok := strings.Cut(h, "## Task\n")
	task, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
	if !ok || task == "" {
		t.Fatalf("handoff has no task:\n%s", h)
	}
	return task
}
