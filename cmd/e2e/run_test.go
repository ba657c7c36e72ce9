package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// criticalTurn writes a file while reporting 172,000 input tokens: 86 % of
// Claude's 200k window, past CRITICAL (85 %).
func criticalTurn(dir string, i int) Turn {
	return Turn{Text: "Writing part of the queue port; next I will move the consumer.", InputTokens: 172_000,
		// A new file each time: Claude refuses to Write an existing file it has
		// not Read, before any hook runs.
		Calls: []Call{{Name: "Write", Args: map[string]any{"file_path": filepath.Join(dir, fmt.Sprintf("part%d.py", i)), "content": fmt.Sprintf("PART = %d\n", i)}}}}
}

const runTask = "Port the billing job to the new queue"

// startRun starts `carryover run -- <claude> -p … ` in dir as a process group
// of its own (so a test can play the terminal's Ctrl-C).
func startRun(t *testing.T, w *workspace, dir, url string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	claude := Install(t, "claude")
	if err := PrepareClaude(w.home, dir); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(carryoverBin, "run", "--", claude, "-p", runTask, "--dangerously-skip-permissions")
	c.Dir = dir
	// No auto-compaction: the test is about carryover's restart, and the
	// 172k-token turns would otherwise start one.
	c.Env = ClaudeEnv(w.home, url, "DISABLE_AUTO_COMPACT=1", "CLAUDE_CODE_MAX_RETRIES=0")
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) })
	return c, &out
}

func waitExit(t *testing.T, c *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 0
	case <-time.After(5 * time.Minute):
		t.Fatal("carryover run did not exit within 5 minutes")
		return -1
	}
}

var startedRE = regexp.MustCompile(`run started \S+ \(run \S+\.(\d+), pid \d+\)`)

// TestRunRestartsClaude: `carryover run` with the real Claude Code; the
// session crosses CRITICAL (86 % of 200k), its PostToolUse hook signals the
// wrapper, which ends it and starts it again; the second run's first model
// request carries the handoff.
func TestRunRestartsClaude(t *testing.T) {
	w := newWorkspace(t, "claude")
	dir := w.project(t, "queue")
	f := NewAnthropic(t, []Turn{criticalTurn(dir, 0)})
	f.Fallback = "Resumed from the handoff; the consumer is next."
	// The answer after the tool result reports the context it grew to, so
	// whichever hook first reads the usage sends the signal: PostToolUse,
	// or Stop when Claude Code had not yet written the tool call's line
	// when PostToolUse ran (as on a busy machine).
	f.CarryUsage = true
	c, out := startRun(t, w, dir, f.URL())
	code := waitExit(t, c)
	log := w.log()
	if code != 0 {
		t.Fatalf("carryover run exited %d\n%s\ncarryover.log:\n%s", code, out, log)
	}
	if n := len(startedRE.FindAllString(log, -1)); n != 2 {
		t.Fatalf("claude started %d times, want 2\n%s\n%s", n, out, log)
	}
	if !strings.Contains(out.String(), "(CRITICAL); restarting it fresh from the handoff (restart 1 of at most 10)") {
		t.Errorf("the restart was not announced on the terminal:\n%s", out)
	}
	// The second run's first model request: the first one with the handoff,
	// and a new conversation (no tool results in it).
	var second string
	for _, b := range f.MainRequests() {
		if strings.Contains(string(b), "[CARRYOVER]") {
			second = string(b)
			break
		}
	}
	if second == "" || strings.Contains(second, "tool_result") || !strings.Contains(second, runTask) || !strings.Contains(second, "SessionStart hook additional context") {
		t.Errorf("no fresh session's first request carries the handoff; requests: %v\n%.3000s", f.Kinds(), second)
	}
}

// TestRunCtrlCNeverRestarts: the terminal's Ctrl-C (SIGINT to the wrapper
// and claude, one process group) during a tool call ends the run with 130
// and no restart.
func TestRunCtrlCNeverRestarts(t *testing.T) {
	w := newWorkspace(t, "claude")
	dir := w.project(t, "queue")
	sleep := Turn{Text: "Running the slow suite.", Calls: []Call{{Name: "Bash", Args: map[string]any{"command": "sleep 60", "description": "slow tests"}}}}
	f := NewAnthropic(t, []Turn{sleep})
	c, out := startRun(t, w, dir, f.URL())
	// Once the tool call is played, claude is running it (or about to):
	// either way the Ctrl-C must end the run without a restart.
	for i := 0; f.Played() == 0; i++ {
		if i == 1200 {
			t.Fatalf("claude never asked for its turn\n%s\n%s", out, w.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	_ = syscall.Kill(-c.Process.Pid, syscall.SIGINT)
	code := waitExit(t, c)
	if code != 130 {
		t.Errorf("carryover run exited %d after Ctrl-C, want 130\n%s", code, out)
	}
	if n := len(startedRE.FindAllString(w.log(), -1)); n != 1 {
		t.Errorf("claude started %d times, want 1 (no restart after Ctrl-C)\n%s", n, w.log())
	}
}

// TestRunRestartLimitClaude: with [limits] max_restarts = 2, a session that
// crosses CRITICAL every time is restarted twice; the third restart is
// refused on the terminal. (The default of 10 is TestRunRestartLimit's.)
func TestRunRestartLimitClaude(t *testing.T) {
	w := newWorkspace(t, "claude")
	dir := w.project(t, "queue")
	os.MkdirAll(filepath.Join(w.home, ".carryover"), 0o700)
	os.WriteFile(filepath.Join(w.home, ".carryover", "config.toml"), []byte("[limits]\nmax_restarts = 2\n"), 0o600)
	var turns []Turn
	for i := range 60 { // a run may play several before it is ended
		turns = append(turns, criticalTurn(dir, i))
	}
	f := NewAnthropic(t, turns)
	c, out := startRun(t, w, dir, f.URL())
	waitExit(t, c)
	if n := len(startedRE.FindAllString(w.log(), -1)); n != 3 {
		t.Errorf("claude started %d times, want 3\n%s\n%s", n, out, w.log())
	}
	if !strings.Contains(out.String(), "the restart limit (2) is reached; not restarting") {
		t.Errorf("the third restart was not refused:\n%s", out)
	}
}

// TestRunIgnoresForeignSignal: a CRITICAL signal naming another session,
// planted in the run's directory while the real Claude Code works, is
// logged and ignored: no restart.
func TestRunIgnoresForeignSignal(t *testing.T) {
	w := newWorkspace(t, "claude")
	dir := w.project(t, "queue")
	f := NewAnthropic(t, []Turn{
		{Text: "Running the suite.", Calls: []Call{{Name: "Bash", Args: map[string]any{"command": "sleep 4", "description": "tests"}}}},
		{Text: "Done; next I will move the consumer."},
	})
	c, out := startRun(t, w, dir, f.URL())
	var reg []string
	for i := 0; len(reg) == 0; i++ {
		if i == 1200 {
			t.Fatalf("the session never registered\n%s\n%s", out, w.log())
		}
		time.Sleep(100 * time.Millisecond)
		reg, _ = filepath.Glob(filepath.Join(w.home, ".carryover", "run", "*", "0.session"))
	}
	id := filepath.Base(filepath.Dir(reg[0]))
	sig := fmt.Sprintf(`{"run":"%s.0","pid":%d,"tool":"claude","session":"someone-elses-session","level":"CRITICAL","percent":90}`, id, c.Process.Pid)
	// Written whole and renamed in, as carryover writes its own: the
	// wrapper polls, and a half-written file is "unreadable", not foreign.
	tmp := filepath.Join(filepath.Dir(reg[0]), ".0.critical.tmp")
	if err := os.WriteFile(tmp, []byte(sig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(filepath.Dir(reg[0]), "0.critical")); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, c); code != 0 {
		t.Errorf("carryover run exited %d\n%s", code, out)
	}
	log := w.log()
	if n := len(startedRE.FindAllString(log, -1)); n != 1 {
		t.Errorf("claude started %d times, want 1\n%s", n, log)
	}
	if !strings.Contains(log, "ignored a restart signal: signal for another session (someone-els") {
		t.Errorf("the foreign signal was not logged as ignored:\n%s", log)
	}
}
