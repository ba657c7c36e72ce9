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
// Each Cline run leaves a hub daemon behind; the test kills it by PID.
func TestClineEndToEnd(t *testing.T) {
	bin := agentkit.InstallAgent(t, clinePinned)
	w := newWorkspace(t)
	dir := w.project(t, "meterlib")
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
	runCline(t, bin, env, dir, "--json", task)
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
			if err := syscall.Kill(pid, syscall.SIGTERM); err == nil {
				t.Logf("killed Cline's hub daemon, pid %d", pid)
			}
		}
	}
}
