package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	t.Logf("Stop hook: %s", w.lastRun("qwen", "Stop")) // flushwait= shows how far Qwen's queued writes lagged
	if runs["qwen SessionEnd"] != 0 {
		t.Logf("SessionEnd fired in a headless run (it did not in 0.24.4)")
	}
	if ts := QwenTranscripts(w.home); len(ts) != 1 {
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
	env := BaseEnv(w.home)
	out, errOut, code := runCarryover(t, env, dir, "list", "--source", "qwen")
	if code != 0 || !strings.Contains(out, "Add a backoffq helper") {
		t.Errorf("list --source qwen (exit %d) does not show the session:\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--source", "qwen", "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, s.Task()) || !strings.Contains(out, s.Next()) {
		t.Errorf("handoff --source qwen (exit %d):\n%s%s", code, out, errOut)
	}
	ts := QwenTranscripts(w.home)
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--transcript", ts[0], "--source", "qwen", "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, s.Next()) || !strings.Contains(out, storyFailCmd) {
		t.Errorf("handoff --transcript --source qwen (exit %d):\n%s%s", code, out, errOut)
	}

	// Session 2: a fresh session gets it through SessionStart.
	r := runAgent(t, "qwen", w.home, dir, "continue", []Turn{{Text: "Resuming. " + s.Next()}}, runOpts{})
	checkDelivered(t, r.first(t), s, "qwen")
}

// TestQwenInstall: with the real Qwen Code on PATH, `carryover install
// --tools qwen` finds 0.24.4 and wires ~/.qwen/settings.json, keeping the
// user's keys; doctor runs the stubs; a session with those hooks writes the
// handoff and the next one receives it; status shows the agent with its
// hooks; uninstall restores settings.json byte for byte.
func TestQwenInstall(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	bin := Install(t, "qwen")
	if err := WriteQwenHooks(home, map[string]string{}); err != nil { // the user's offline settings
		t.Fatal(err)
	}
	cfg := filepath.Join(home, ".qwen", "settings.json")
	before, _ := os.ReadFile(cfg)
	env := MergeEnv(BaseEnv(home), "PATH="+filepath.Dir(bin)+":/usr/local/bin:/usr/bin:/bin")
	if out, _, _ := runCarryover(t, env, root, "detect"); !strings.Contains(out, "✓ Qwen Code              0.24.4") {
		t.Errorf("detect does not find Qwen Code 0.24.4:\n%s", out)
	}
	out, errOut, code := runCarryover(t, env, root, "install", "--tools", "qwen", "--yes")
	if code != 0 || !strings.Contains(out, "Qwen Code 0.24.4") {
		t.Fatalf("install exit %d:\n%s\n%s", code, out, errOut)
	}
	installed, _ := os.ReadFile(cfg)
	for _, ev := range agentEvents["qwen"] {
		if !strings.Contains(string(installed), "snapshot --tool qwen --event "+ev) {
			t.Errorf("settings.json lacks the %s hook:\n%s", ev, installed)
		}
	}
	if !strings.Contains(string(installed), `"selectedType": "openai"`) {
		t.Errorf("install dropped the user's settings:\n%s", installed)
	}
	if out, errOut, code := runCarryover(t, env, root, "doctor"); code != 0 || !strings.Contains(out, "✓ Qwen Code: 4 hooks ran") {
		t.Errorf("doctor exit %d:\n%s\n%s", code, out, errOut)
	}

	dir := filepath.Join(root, "proj")
	InitGitRepo(t, dir)
	task := "Install check for qwen: write the marker file"
	turns := []Turn{
		{Text: "Writing the marker file.", Calls: []Call{{Name: "write_file", Args: map[string]any{"file_path": filepath.Join(dir, "marker.txt"), "content": "hello\n"}}}},
		{Text: "Wrote marker.txt. Next I will verify the marker for qwen."},
	}
	f := NewChatServer(t, turns)
	if r := RunQwen(t, QwenOpts{Bin: bin, Home: home, Dir: dir, BaseURL: f.URL(), Prompt: task}); r.ExitCode != 0 {
		t.Fatalf("qwen: %+v", r)
	}
	if h, err := os.ReadFile(filepath.Join(dir, ".carryover", "handoff.md")); err != nil || !strings.Contains(string(h), task) || !strings.Contains(string(h), "from qwen") {
		log, _ := os.ReadFile(filepath.Join(home, ".carryover", "carryover.log"))
		t.Fatalf("no handoff from the installed hooks (%v):\n%s\nlog:\n%s", err, h, log)
	}
	f2 := NewChatServer(t, []Turn{{Text: "Next I will stop."}})
	RunQwen(t, QwenOpts{Bin: bin, Home: home, Dir: dir, BaseURL: f2.URL(), Prompt: "continue"})
	if req := first(f2.MainRequests()); !strings.Contains(req, "[CARRYOVER]") || !strings.Contains(req, task) {
		t.Errorf("the second session did not receive the handoff in its first request")
	}
	if out, _, _ := runCarryover(t, env, dir, "info"); !strings.Contains(out, filepath.Join(home, ".qwen", "projects")) {
		t.Errorf("info does not name Qwen Code's session store:\n%s", out)
	}
	if out, _, _ := runCarryover(t, env, root, "status"); !strings.Contains(out, "✓ Qwen Code              0.24.4     hooks: present") ||
		!strings.Contains(out, "→ qwen session") {
		t.Errorf("status:\n%s", out)
	}

	if out, errOut, code := runCarryover(t, env, root, "uninstall"); code != 0 {
		t.Fatalf("uninstall exit %d\n%s\n%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(cfg); string(after) != string(before) {
		t.Errorf("settings.json not restored by uninstall:\nbefore %q\nafter  %q", before, after)
	}
	if _, err := os.Stat(cfg + ".carryover.bak"); err == nil {
		t.Error("uninstall left settings.json.carryover.bak")
	}
}
