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
)

// clinePinned is the Cline CLI the test runs (3.0.65, also the newest on
// npm on 2026-11-27: `npm view cline version`).
var clinePinned = Pinned["cline"]

// TestClineEndToEnd drives the real Cline CLI headless against the fake
// Chat Completions server with the hook files `carryover install` writes
// (~/.cline/hooks/TaskStart, TaskResume, TaskComplete, TaskCancel, mode
// 0755). Install and uninstall first leave ~/.cline byte for byte as it
// was, a hook file of the user's beside carryover's; status says Cline's
// handoff goes through the pointer block. In the session the model adds a
// file (apply_patch; 3.0.65 offers no editor tool to an openai-compatible
// model) and runs a command that fails (exit 2); TaskStart and TaskComplete
// run `carryover snapshot` with Cline's payload (no transcript path: the
// session is found by its id), TaskComplete writes the handoff and, under
// pointer = "auto", the pointer block in AGENTS.md. The next Cline session
// gets the handoff through that path: AGENTS.md's pointer block is in its
// first request, and the handoff it then reads is in the next one. A Claude
// Code session receives it at its start too. The final uninstall removes
// carryover's hook files and nothing of the user's. Each Cline run leaves a
// hub daemon behind; the test kills it by PID.
func TestClineEndToEnd(t *testing.T) {
	bin := InstallAgent(t, clinePinned)
	w := newWorkspace(t, "claude")
	dir := w.project(t, "meterlib")
	t.Cleanup(func() { killClineDaemons(t, w.home) })
	const (
		task = "Add a semicolon splitter to meterlib"
		next = "Next: make the splitter test pass, then rerun it."
		fail = "ls /nonexistent-meter-dir"
	)
	srv := NewChatServer(t, []Turn{
		{Text: "Adding the splitter.", Calls: []Call{{Name: "apply_patch", Args: map[string]any{
			"input": "*** Begin Patch\n*** Add File: " + filepath.Join(dir, "split.py") + "\n+def split(s):\n+    return s.split(';')\n*** End Patch"}}}},
		{Text: "Running the check.", Calls: []Call{{Name: "run_commands", Args: map[string]any{"commands": []any{fail}}}}},
		{Text: "The check failed. " + next},
		{Text: next},
	})
	env := append(BaseEnv(w.home), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	runCline(t, bin, env, dir, "auth", "-p", "openai", "-k", "dummy", "-m", "gpt-test", "-b", srv.URL()+"/v1")
	killClineDaemons(t, w.home) // nothing writes into ~/.cline while it is compared
	userHook := filepath.Join(w.home, ".cline", "hooks", "PreToolUse")
	writeFile(t, userHook, "#!/bin/sh\nexit 0\n", 0o755)
	clineDir := filepath.Join(w.home, ".cline")
	before := treeOf(t, clineDir)
	installAndUndo(t, env, dir, "cline", clineDir, before, "Cline CLI 3.0.65: 4 hooks")
	for _, ev := range []string{"TaskStart", "TaskResume", "TaskComplete", "TaskCancel"} {
		fi, err := os.Stat(filepath.Join(clineDir, "hooks", ev))
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("hook file %s: %v (mode %v), want mode 0755", ev, err, fi)
		}
	}
	out, _, _ := runCarryover(t, env, dir, "status")
	if !strings.Contains(out, "restore: Cline CLI cannot be told at session start; the handoff reaches it through the pointer block in AGENTS.md") {
		t.Errorf("status does not say how Cline gets the handoff:\n%s", out)
	}
	if out, _, _ := runCarryover(t, env, dir, "doctor"); !strings.Contains(out, "✓ Cline CLI: 4 hooks ran") {
		t.Errorf("doctor does not prove Cline's hook files:\n%s", out)
	}

	runCline(t, bin, env, dir, "--json", task)
	runs := w.hookRuns()
	for _, ev := range []string{"TaskStart", "TaskComplete"} {
		if runs["cline "+ev] == 0 {
			t.Errorf("carryover's %s hook did not run; ran: %v\n%s", ev, runs, w.log())
		}
	}
	t.Logf("hook runs after the Cline session: %v", runs)
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

	// The next Cline session: the pointer block in AGENTS.md reaches the
	// model, which reads the handoff it points at.
	srv2 := NewChatServer(t, []Turn{
		{Text: "Reading the handoff.", Calls: []Call{{Name: "run_commands", Args: map[string]any{"commands": []any{"cat .carryover/handoff.md"}}}}},
		{Text: "Resuming: " + next},
		{Text: "Resuming."},
	})
	runCline(t, bin, env, dir, "auth", "-p", "openai", "-k", "dummy", "-m", "gpt-test", "-b", srv2.URL()+"/v1")
	killClineDaemons(t, w.home) // the second run starts its own daemon, with the second server's settings
	runCline(t, bin, env, dir, "--json", "Continue the work.")
	reqs := srv2.MainRequests()
	if len(reqs) < 2 {
		t.Fatalf("the next Cline session made %d model requests, want 2", len(reqs))
	}
	if !strings.Contains(string(reqs[0]), ".carryover/handoff.md") {
		t.Errorf("the next Cline session's first request lacks AGENTS.md's pointer block:\n%.3000s", reqs[0])
	}
	if !strings.Contains(string(reqs[1]), task) || !strings.Contains(string(reqs[1]), "make the splitter test pass") {
		t.Errorf("the handoff Cline read is not in its next request:\n%.3000s", reqs[1])
	}

	// The next session, in Claude Code, gets the handoff at SessionStart.
	r := runAgent(t, "claude", w.home, dir, "continue", []Turn{{Text: "Resuming."}}, runOpts{})
	if req := r.first(t); !strings.Contains(req, "[CARRYOVER]") || !strings.Contains(req, "make the splitter test pass") {
		t.Errorf("Claude's first model request lacks the Cline handoff:\n%.3000s", req)
	}

	out, errOut, code = runCarryover(t, env, dir, "uninstall", "--tools", "cline")
	if code != 0 || !strings.Contains(out, "removed  Cline CLI") {
		t.Errorf("uninstall --tools cline (exit %d):\n%s%s", code, out, errOut)
	}
	left, _ := filepath.Glob(filepath.Join(clineDir, "hooks", "*"))
	if len(left) != 1 || left[0] != userHook {
		t.Errorf("after uninstall ~/.cline/hooks holds %v, want only the user's %s", left, userHook)
	}
	if b, _ := os.ReadFile(userHook); string(b) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("the user's hook changed: %q", b)
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
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("cline %s: %v\n%s", args[0], err, out.Bytes())
	}
	t.Logf("cline %s: %s", args[0], time.Since(start).Round(time.Millisecond))
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
