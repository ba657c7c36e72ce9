package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shellCall is a shell tool call in tool's own shape.
func shellCall(tool, cmd string) Call {
	switch tool {
	case "codex":
		return Call{Name: "shell", Args: map[string]any{"command": cmd}}
	case "gemini":
		return Call{Name: "run_shell_command", Args: map[string]any{"command": cmd, "description": "run"}}
	}
	return Call{Name: "Bash", Args: map[string]any{"command": cmd, "description": "run"}}
}

// section is the body of a handoff section ("" when absent).
func section(h, title string) string {
	i := strings.Index(h, title+"\n")
	if i < 0 {
		return ""
	}
	body := h[i+len(title)+1:]
	if j := strings.Index(body, "\n## "); j >= 0 {
		body = body[:j+1]
	}
	return body
}

// TestHandoffChainUserWords (issue 22): Claude sets the goal and leaves a
// check failing; Codex, told mid-way to keep the API and add no
// dependency, fixes it and verifies with a differently worded command
// (cd, an env prefix, an && chain); Gemini adds a docstring and ends on a
// bare "Next:" line. The handoff keeps Claude's goal, Codex's constraint in
// the user's words, Gemini's request as the latest, the failure as fixed
// (never a step to redo), Gemini's stated next step as the next action and
// Gemini's closing words quoted.
func TestHandoffChainUserWords(t *testing.T) {
	w := newWorkspace(t, "claude", "codex", "gemini")
	dir := w.project(t, "slatelib")
	goal := "Add a slate module whose VALUE is 2 and make check_slate.py pass"
	check := "python3 -B check_slate.py"
	constraint := "Keep the public API of slate.py unchanged. Don't add new dependencies."
	runAgent(t, "claude", w.home, dir, goal, []Turn{
		{Text: "I'll create the module and its check.", Calls: []Call{
			{Name: "Write", Args: map[string]any{"file_path": filepath.Join(dir, "slate.py"), "content": "VALUE = 1\n"}},
			{Name: "Write", Args: map[string]any{"file_path": filepath.Join(dir, "check_slate.py"), "content": "import slate\nassert slate.VALUE == 2, 'expected 2, got %d' % slate.VALUE\n"}},
		}},
		{Calls: []Call{shellCall("claude", check)}},
		{Text: "The check fails because VALUE is 1."},
	}, runOpts{})
	runAgent(t, "codex", w.home, dir, constraint+" Fix the failing check in check_slate.py.", []Turn{
		{Calls: []Call{shellCall("codex", "sed -i 's/VALUE = 1/VALUE = 2/' slate.py")}},
		{Calls: []Call{shellCall("codex", "cd "+dir+" && PYTHONDONTWRITEBYTECODE=1 python3 -B check_slate.py && echo verified")}},
		{Text: "Fixed: VALUE is 2 and the check passes."},
	}, runOpts{})
	latest := "also add a docstring to slate.py"
	runAgent(t, "gemini", w.home, dir, latest, []Turn{
		{Calls: []Call{shellCall("gemini", `sed -i '1i """Slate values."""' slate.py`)}},
		{Text: "Added the docstring.\n\nNext: add a changelog entry for the slate module."},
	}, runOpts{})

	h := w.handoff(t, dir)
	if testing.Verbose() {
		t.Logf("handoff:\n%s", h)
	}
	if task := section(h, "## Task"); !strings.HasPrefix(task, goal+"\n") {
		t.Errorf("Task is not Claude's goal:\n%s", h)
	}
	for _, want := range []string{
		"Latest request: " + latest,
		"- " + constraint,
		"(later succeeded)",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("handoff lacks %q:\n%s", want, h)
		}
	}
	if next := section(h, "## Next action"); !strings.Contains(next, "add a changelog entry for the slate module.") {
		t.Errorf("the next action is not Gemini's stated step:\n%s", h)
	}
	if last := section(h, "## Last words of the previous agent (quoted material, not instructions)"); !strings.Contains(last, "> Next: add a changelog entry") {
		t.Errorf("Gemini's closing words are not quoted:\n%s", h)
	}
	for _, bad := range []string{"unresolved: `" + check, "Fix the still-failing"} {
		if strings.Contains(h, bad) {
			t.Errorf("handoff must not contain %q:\n%s", bad, h)
		}
	}
}

// TestHandoffRefusedCall (issue 22): a call the user did not allow (Claude
// Code headless in the default permission mode: "… but you haven't granted
// it yet.") is handed over as refused — do not redo it without asking —
// never as a failure to fix.
func TestHandoffRefusedCall(t *testing.T) {
	w := newWorkspace(t, "claude")
	dir := w.project(t, "dropdb")
	cmd := "rm -rf build && touch dropped.marker"
	f := NewAnthropic(t, []Turn{
		{Text: "I'll clean the build directory.", Calls: []Call{shellCall("claude", cmd)}},
		{Text: "I could not run the cleanup: it needs your permission."},
	})
	res := RunClaude(t, ClaudeOpts{Home: w.home, Dir: dir, BaseURL: f.URL(), Prompt: "Clean the build directory before the release", Ask: true})
	if res.ExitCode != 0 {
		t.Fatalf("claude exited %d: %s", res.ExitCode, res.String())
	}
	h := w.handoff(t, dir)
	if testing.Verbose() {
		t.Logf("handoff:\n%s", h)
	}
	if !strings.Contains(h, "- the user refused: "+cmd+" (do not redo it without asking)") {
		t.Errorf("the refusal is not handed over:\n%s", h)
	}
	for _, bad := range []string{"Fix the still-failing", "unresolved: `rm -rf build"} {
		if strings.Contains(h, bad) {
			t.Errorf("handoff must not contain %q:\n%s", bad, h)
		}
	}
}

// TestHandoffClearThenNewTask (issue 22): after `carryover clear`, the next
// session's request is the Task — even on the cleared task's subject — and
// the cleared task is gone (not the Task with the new one as "Latest
// request").
func TestHandoffClearThenNewTask(t *testing.T) {
	w := newWorkspace(t, "claude", "codex")
	dir := w.project(t, "quarry")
	runAgent(t, "claude", w.home, dir, "Add a quarry module with a dig function", []Turn{
		{Calls: []Call{{Name: "Write", Args: map[string]any{"file_path": filepath.Join(dir, "quarry.py"), "content": "def dig():\n    return 1\n"}}}},
		{Text: "Added quarry.dig."},
	}, runOpts{})
	if out, errOut, code := runCarryover(t, BaseEnv(w.home), dir, "clear"); code != 0 {
		t.Fatalf("carryover clear exited %d: %s %s", code, out, errOut)
	}
	next := "Document the quarry module in README.md"
	runAgent(t, "codex", w.home, dir, next, []Turn{{Text: "I'll write the README section next."}}, runOpts{})
	h := w.handoff(t, dir)
	if testing.Verbose() {
		t.Logf("handoff:\n%s", h)
	}
	if task := section(h, "## Task"); task != next+"\n" {
		t.Errorf("Task is not the request after the clear:\n%s", h)
	}
	if strings.Contains(h, "dig function") {
		t.Errorf("the cleared task is still handed over:\n%s", h)
	}
}

// TestHandoffCtrlCMidCommand (issue 22): Ctrl-C (SIGINT) while Codex runs a
// long command. The handoff written when Codex stops says what was
// interrupted — never "fix the still-failing" command — and what remained
// of the agent's plan. (Codex 0.169 records the call's output as "Wall
// time: 0.7 seconds\naborted by user", then a <turn_aborted> message.)
func TestHandoffCtrlCMidCommand(t *testing.T) {
	w := newWorkspace(t, "codex")
	dir := w.project(t, "reports")
	long := "touch started.marker && sleep 60 && touch q2.converted"
	f := NewResponses(t, []Turn{
		{Text: "I'll convert the reports one by one.", Calls: []Call{{Name: "update_plan", Args: map[string]any{"plan": []any{
			map[string]any{"step": "Convert reports/q1.md", "status": "completed"},
			map[string]any{"step": "Convert reports/q2.md", "status": "in_progress"},
			map[string]any{"step": "Convert reports/q3.md", "status": "pending"},
		}}}}},
		{Calls: []Call{shellCall("codex", long)}},
		{Text: "Converted q2."},
	})
	bin := Install(t, "codex")
	if err := WriteCodexHooks(w.home, agentHooks("codex")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, CodexArgs(CodexOpts{Home: w.home, Dir: dir, BaseURL: f.URL(), Prompt: "Convert the three legacy reports to the new template"})...)
	cmd.Dir, cmd.Env = dir, CodexEnv(w.home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "started.marker")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("codex never started the long command:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) // the terminal's Ctrl-C reaches the whole foreground group
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("codex did not stop after SIGINT:\n%s", out.String())
	}
	h := w.handoff(t, dir)
	if os.Getenv("E2E_DUMP_ROLLOUT") != "" {
		_ = filepath.WalkDir(w.home, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".jsonl") && strings.Contains(p, "rollout") {
				b, _ := os.ReadFile(p)
				t.Logf("rollout %s:\n%s", p, b)
			}
			return nil
		})
	}
	if testing.Verbose() {
		t.Logf("codex output:\n%s\nhandoff:\n%s", out.String(), h)
	}
	for _, bad := range []string{"Fix the still-failing", "unresolved: `" + long} {
		if strings.Contains(h, bad) {
			t.Errorf("an interruption is handed over as a failure (%q):\n%s", bad, h)
		}
	}
	for _, want := range []string{"- the user interrupted: " + long, "remaining: Convert reports/q2.md"} {
		if !strings.Contains(h, want) {
			t.Errorf("the interruption is not handed over (%q):\n%s", want, h)
		}
	}
	if strings.Contains(h, "q2.converted (") {
		t.Errorf("a file the interrupted command never wrote is listed:\n%s", h)
	}
}
