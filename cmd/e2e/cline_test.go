//go:build linux

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/carryover/carryover/cmd/e2e/agentkit"
)

// clinePinned is the Cline CLI the test runs (3.0.65, the newest on npm on
// 2026-11-27). Not in agentkit.Pinned yet: carryover does not install hooks
// for Cline, so the tests that walk Pinned have nothing to run for it.
var clinePinned = agentkit.Agent{Tool: "cline", Package: "cline", Version: "3.0.65", Bin: "cline"}

// TestClineEndToEnd drives the real Cline CLI headless against the fake
// Chat Completions server: its tool calls add a file (apply_patch; 3.0.65
// offers no editor tool to an openai-compatible model) and run a command
// that fails (exit 2). carryover reads the session from Cline's store:
// `list --source cline`, `handoff --source cline` and `handoff --transcript`
// without --source name the task, the failing command and the next step.
// Hook files carryover's install does not write yet (TaskStart, TaskComplete
// run `carryover snapshot`) are written by the test: TaskComplete writes the
// handoff, the pointer block lands in AGENTS.md under pointer = "auto"
// (`install --tools cline` records that Cline needs it), and a next Claude
// Code session receives the handoff through its SessionStart hook.
// Each Cline run leaves a hub daemon behind; the test kills it by PID.
func TestClineEndToEnd(t *testing.T) {
	bin := agentkit.InstallAgent(t, clinePinned)
	w := newWorkspace(t, "claude")
	dir := w.project(t, "meterlib")
	hooks := filepath.Join(w.home, ".cline", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"TaskStart", "TaskComplete"} {
		stub := "#!/bin/sh\nexec '" + carryoverBin + "' snapshot --tool cline --event " + ev + "\n"
		if err := os.WriteFile(filepath.Join(hooks, ev), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { killClineDaemons(t, w.home) })
	const (
		task = "Add a semicolon splitter to meterlib"
		next = "Next: make the splitter test pass, then rerun it."
		fail = "ls /nonexistent-meter-dir"
	)
	srv := agentkit.NewChatServer(t, []agentkit.Turn{
		{Text: "Adding the splitter.", Calls: []agentkit.Call{{Name: "apply_patch", Args: map[string]any{
			"input": "*** Begin Patch\n*** Add File: " + filepath.Join(dir, "split.py") + "\n+def split(s):\n+    return s.split(';')\n*** End Patch"}}}},
		{Text: "Running the check.", Calls: []agentkit.Call{{Name: "run_commands", Args: map[string]any{"commands": []any{fail}}}}},
		{Text: "The check failed. " + next},
		{Text: next},
	})
	env := append(agentkit.BaseEnv(w.home), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	runCline(t, bin, env, dir, "auth", "-p", "openai", "-k", "dummy", "-m", "gpt-test", "-b", srv.URL()+"/v1")
	if out, errOut, code := runCarryover(t, env, dir, "install", "--tools", "cline"); code != 0 {
		t.Fatalf("install --tools cline (exit %d):\n%s%s", code, out, errOut)
	}
	runCline(t, bin, env, dir, "--json", task)
	runs := w.hookRuns()
	for _, ev := range []string{"TaskStart", "TaskComplete"} {
		if runs["cline "+ev] == 0 {
			t.Errorf("carryover's %s hook did not run; ran: %v\n%s", ev, runs, w.log())
		}
	}
	h := w.handoff(t, dir)
	for _, want := range []string{task, fail, "make the splitter test pass"} {
		if !strings.Contains(h, want) {
			t.Errorf("handoff.md lacks %q:\n%s", want, h)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "AGENTS.md")); err != nil || !strings.Contains(string(b), ".carryover/handoff.md") {
		t.Errorf("no pointer block in AGENTS.md under pointer = auto (%v):\n%s", err, b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "split.py")); err != nil || !strings.Contains(string(b), "split(';')") {
		t.Errorf("apply_patch did not add split.py (%v): %q", err, b)
	}
	docs, _ := filepath.Glob(filepath.Join(w.home, ".cline", "data", "sessions", "*", "*.messages.json"))
	if len(docs) != 1 {
		t.Fatalf("want one Cline session document, got %v", docs)
	}

	out, errOut, code := runCarryover(t, env, dir, "list", "--source", "cline")
	if code != 0 || !strings.Contains(out, task) {
		t.Errorf("list --source cline (exit %d) does not show the session:\n%s%s", code, out, errOut)
	}
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--source", "cline", "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, task) || !strings.Contains(out, fail) || !strings.Contains(out, "make the splitter test pass") {
		t.Errorf("handoff --source cline (exit %d):\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "<user_input") {
		t.Errorf("the prompt's <user_input> wrapper reached the handoff:\n%s", out)
	}
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--transcript", docs[0], "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(errOut, "cline") || !strings.Contains(out, fail) {
		t.Errorf("handoff --transcript without --source (exit %d):\n%s%s", code, out, errOut)
	}

	// The next session, in Claude Code, gets the handoff at SessionStart.
	r := runAgent(t, "claude", w.home, dir, "continue", []agentkit.Turn{{Text: "Resuming."}}, runOpts{})
	if req := r.first(t); !strings.Contains(req, "[CARRYOVER]") || !strings.Contains(req, task) || !strings.Contains(req, "make the splitter test pass") {
		t.Errorf("Claude's first model request lacks the Cline handoff:\n%.3000s", req)
	}
}

func runCline(t *testing.T, bin string, env []string, dir string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("cline %s: %v\n%s", args[0], err, out.Bytes())
	}
}

// killClineDaemons kills, by PID, the hub daemons Cline left running for
// this HOME (`cline --cline-hub-daemon`, found in /proc by its command line
// and HOME).
func killClineDaemons(t *testing.T, home string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		envb, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if bytes.Contains(cl, []byte("--cline-hub-daemon")) && bytes.Contains(envb, []byte("HOME="+home+"\x00")) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
				t.Logf("killed Cline's hub daemon, pid %d", pid)
			}
			// it is not our child: wait until /proc drops it (it writes
			// into HOME until then, and HOME is removed next)
			for i := 0; i < 500; i++ {
				if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err != nil || bytes.Contains(st, []byte(") Z ")) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
}
