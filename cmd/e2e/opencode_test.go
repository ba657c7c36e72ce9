package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenCodeEndToEnd drives the real OpenCode CLI (`opencode run`, the
// pinned 1.18.x) with the plugin `carryover install` writes. Install and
// uninstall first leave ~/.config/opencode byte for byte as it was (the
// user's own plugin and config beside carryover's); doctor runs the
// plugin's relays. Then the story runs against the fake Chat Completions
// server (a file written, README.md edited, `ls tests/` failing with exit
// 2, stored by OpenCode as a completed part): the plugin relays SessionStart
// and Stop (session.idle), the Stop writes the handoff with the failure
// read from the exit code. list, handoff --source opencode, handoff
// --transcript on the database and status know the session. Cell Claude →
// OpenCode: in another project a Claude Code session's handoff reaches the
// next OpenCode session's first model request, once, in its system prompt.
func TestOpenCodeEndToEnd(t *testing.T) {
	testOpenCode(t, "opencode", Pinned["opencode"])
}

// TestOpenCodeNewest is the same story with the newest OpenCode release.
func TestOpenCodeNewest(t *testing.T) {
	testOpenCode(t, "opencode", Newest["opencode"])
}

// TestKiloEndToEnd runs the story with the real Kilo CLI 7.7.7 (`kilo
// run`): Kilo's own plugin folder and database, the same plugin relays.
func TestKiloEndToEnd(t *testing.T) {
	testOpenCode(t, "kilo", Pinned["kilo"])
}

func testOpenCode(t *testing.T, tool string, pin Agent) {
	if pin.Version == "" {
		t.Fatalf("no %s version pinned", tool)
	}
	w := newWorkspace(t, "claude")
	t.Cleanup(func() { killLeftovers(t, w.home) })
	bin := InstallAgent(t, pin)
	native := NativeBin(bin)
	display := map[string]string{"opencode": "OpenCode", "kilo": "Kilo CLI"}[tool]
	dir := w.project(t, "retrylib")
	env := append(BaseEnv(w.home), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))

	cfg := filepath.Join(w.home, ".config", tool)
	userPlugin := filepath.Join(cfg, "plugins", "mine.js")
	writeFile(t, userPlugin, "export const Mine = async () => ({})\n", 0o644)
	writeFile(t, filepath.Join(cfg, "tui.json"), "{\n  \"theme\": \"system\"\n}\n", 0o600)
	before := treeOf(t, cfg)
	plugin := filepath.Join(cfg, "plugins", "carryover.js")
	installed := installAndUndo(t, env, dir, tool, cfg, before, display+" "+pin.Version+": 4 hooks")
	if b, err := os.ReadFile(plugin); err != nil || !strings.Contains(string(b), `const CARRYOVER = "`+carryoverBin+`"`) {
		t.Fatalf("install did not write the plugin %s (%v):\n%s", plugin, err, installed)
	} else if regexp.MustCompile(`(?m)^\s*import\s|\brequire\(|\bimport\(`).Match(b) {
		t.Errorf("the plugin imports something (an offline %s would npm-install its SDK):\n%s", tool, b)
	}
	if out, _, _ := runCarryover(t, env, dir, "doctor"); !strings.Contains(out, "✓ "+display+": 4 hooks ran") {
		t.Errorf("doctor does not prove the %s plugin:\n%s", tool, out)
	}

	s := story{Word: "retry" + tool[:2]}
	start := time.Now()
	runAgent(t, tool, w.home, dir, s.Task(), s.turns(tool, dir), runOpts{Bin: native})
	t.Logf("%s run with the plugin took %s", tool, time.Since(start).Round(time.Second))
	s.checkFiles(t, dir)
	runs := w.hookRuns()
	for _, ev := range []string{"SessionStart", "Stop"} {
		if runs[tool+" "+ev] == 0 {
			t.Errorf("the plugin did not relay %s; runs: %v\n%s", ev, runs, w.log())
		}
	}
	s.checkHandoff(t, w.handoff(t, dir), tool)

	out, errOut, code := runCarryover(t, env, dir, "list", "--source", tool)
	if code != 0 || !strings.Contains(out, s.Task()[:30]) {
		t.Errorf("list --source %s (exit %d) does not show the session:\n%s%s", tool, code, out, errOut)
	}
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--source", tool, "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, s.Task()) || !strings.Contains(out, s.Next()) || !strings.Contains(out, storyFailCmd) || !strings.Contains(out, "exit 2") {
		t.Errorf("handoff --source %s (exit %d):\n%s%s", tool, code, out, errOut)
	}
	db := OpenCodeDB(w.home, tool)
	out, errOut, code = runCarryover(t, env, dir, "handoff", "--transcript", db, "--source", tool, "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, "Source:** "+display) || !strings.Contains(out, s.Next()) || !strings.Contains(out, storyFailCmd) {
		t.Errorf("handoff --transcript %s (exit %d):\n%s%s", db, code, out, errOut)
	}
	for _, f := range []string{db, db + "-wal"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s is gone after carryover read the database: %v", f, err)
		}
	}
	if out, _, _ := runCarryover(t, env, dir, "status"); !strings.Contains(out, display) {
		t.Errorf("status does not name %s:\n%s", display, out)
	}
	if tool == "kilo" {
		return // one Kilo cell: the same plugin and reader as OpenCode's
	}

	// Claude → OpenCode, in another project: the next OpenCode session's
	// first model request carries Claude's handoff once.
	dir2 := w.project(t, "claudeside")
	cs := story{Word: "retrycc"}
	runAgent(t, "claude", w.home, dir2, cs.Task(), cs.turns("claude", dir2), runOpts{})
	cs.checkHandoff(t, w.handoff(t, dir2), "claude")
	r := runAgent(t, tool, w.home, dir2, "continue", []Turn{{Text: "Resuming. " + cs.Next()}}, runOpts{Bin: native})
	first := r.first(t)
	checkDelivered(t, first, cs, "claude")
	if !strings.Contains(first, storyFailCmd) {
		t.Errorf("OpenCode's first request lacks the failed command %q from Claude's handoff", storyFailCmd)
	}

	out, errOut, code = runCarryover(t, env, dir, "uninstall", "--tools", tool)
	if code != 0 {
		t.Errorf("uninstall --tools %s (exit %d):\n%s%s", tool, code, out, errOut)
	}
	if _, err := os.Stat(plugin); !os.IsNotExist(err) {
		t.Errorf("uninstall left %s (%v)", plugin, err)
	}
	if b, err := os.ReadFile(userPlugin); err != nil || string(b) != "export const Mine = async () => ({})\n" {
		t.Errorf("the user's plugin changed: %q %v", b, err)
	}
}

// killLeftovers kills, by PID, OpenCode or Kilo processes still running for
// home (found in /proc by their HOME), so nothing writes into the HOME the
// test removes next.
func killLeftovers(t *testing.T, home string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		envb, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if !bytes.Contains(envb, []byte("HOME="+home+"\x00")) || !(bytes.Contains(cl, []byte("opencode")) || bytes.Contains(cl, []byte("kilo"))) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			t.Logf("killed a process the agent left running: pid %d %q", pid, bytes.ReplaceAll(cl, []byte{0}, []byte{' '}))
		}
		for i := 0; i < 500; i++ {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err != nil || bytes.Contains(st, []byte(") Z ")) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
