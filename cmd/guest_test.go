package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/service"
)

// guestRun runs a Claude Code Stop in project with the bundled session,
// after writing files into the carryover home.
func guestRun(t *testing.T, project string, home map[string]string) *Env {
	t.Helper()
	e, _ := hookEnv(t, project)
	ch := e.Home()
	os.MkdirAll(ch, 0o700)
	for n, b := range home {
		os.WriteFile(filepath.Join(ch, n), []byte(b), 0o600)
	}
	src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(tr, src, 0o600)
	runSnap(e, "Stop", map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": project})
	return e
}

// TestPointerAutoFollowsInstalledAgents: under pointer = "auto" the block
// is written when an installed agent's row needs it (install's record),
// and only into AGENTS.md and that agent's own memory file.
func TestPointerAutoFollowsInstalledAgents(t *testing.T) {
	project := t.TempDir()
	guestRun(t, project, map[string]string{
		"config.toml":      "tools = [\"claude\", \"aider\"]\n",
		service.AgentsFile: `{"claude": {"version": "2.1.197"}, "aider": {"version": "0.86.3", "pointer": true}}`,
	})
	if b, _ := os.ReadFile(filepath.Join(project, "AGENTS.md")); !strings.Contains(string(b), "<!--CARRYOVER:START-->") {
		t.Errorf("AGENTS.md lacks the block Aider needs: %q", b)
	}
	if _, err := os.Stat(filepath.Join(project, "CLAUDE.md")); err == nil {
		t.Errorf("CLAUDE.md created although Claude Code's injection works")
	}

	project = t.TempDir()
	guestRun(t, project, map[string]string{"config.toml": "tools = [\"claude\", \"codex\"]\n"})
	for _, n := range []string{"AGENTS.md", "CLAUDE.md", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(project, n)); err == nil {
			t.Errorf("%s written with Claude Code and Codex only", n)
		}
	}
	if _, err := os.Stat(filepath.Join(project, ".carryover", "handoff.md")); err != nil {
		t.Errorf("no handoff: %v", err)
	}
}

// TestIgnoredProjectHook: a hook in an ignored project writes no file,
// no log line and no ledger row.
func TestIgnoredProjectHook(t *testing.T) {
	project := t.TempDir()
	e := guestRun(t, project, map[string]string{"config.toml": "ignore = [\"" + project + "\"]\n"})
	if _, err := os.Lstat(filepath.Join(project, ".carryover")); err == nil {
		t.Errorf("the ignored project got a .carryover")
	}
	if _, err := os.Stat(filepath.Join(e.Home(), "carryover.log")); err == nil {
		t.Errorf("a hook in an ignored project logged")
	}
	if publish.Exists(filepath.Join(e.Home(), ledger.FileName)) {
		l, err := ledger.Open(e.Home())
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if ps, _ := l.KnownProjects(); len(ps) != 0 {
			t.Errorf("the ledger knows %v", ps)
		}
	}
}

// TestHomeSessionHandoffFromLedger: a session in $HOME writes no file
// there, and the next session still gets the handoff injected.
func TestHomeSessionHandoffFromLedger(t *testing.T) {
	e, out := hookEnv(t, "")
	home := e.UserHome()
	src, _ := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	tr := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(tr, src, 0o600)
	runSnap(e, "Stop", map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": home})
	out.Reset()
	runSnap(e, "SessionStart", map[string]any{"session_id": "s2", "transcript_path": tr + ".2", "cwd": home, "source": "startup"})
	if !strings.Contains(out.String(), "[CARRYOVER]") {
		t.Errorf("no injection in the home directory: %q", out.String())
	}
	ents, _ := os.ReadDir(home)
	for _, d := range ents {
		if d.Name() != ".carryover" {
			t.Errorf("%s written in the home directory", d.Name())
		}
	}
	for _, n := range []string{"history", ".gitignore"} {
		if _, err := os.Lstat(filepath.Join(home, ".carryover", n)); err == nil {
			t.Errorf("~/.carryover/%s written: the home was treated as a project", n)
		}
	}
}
