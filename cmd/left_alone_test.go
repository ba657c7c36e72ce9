package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTeamFilesLeftAlone: in a repository that commits its agents' memory
// files and its .gitignore (and, in the second case, .carryover/.gitignore:
// it has claimed the directory), a session's hook events edit none of them
// and write nothing in $HOME but carryover's home; `carryover status` in
// the project names the tracked files it leaves alone, and --json lists
// them.
func TestTeamFilesLeftAlone(t *testing.T) {
	for _, claimed := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory-files", true: "carryover-dir-claimed"}[claimed], func(t *testing.T) {
			project := t.TempDir()
			team := map[string]string{"AGENTS.md": "# Team rules\nRun make test.\n", "CLAUDE.md": "@AGENTS.md\n", ".gitignore": "node_modules/\n"}
			if claimed {
				team[filepath.Join(".carryover", ".gitignore")] = "!handoff.md\n"
			}
			for name, body := range team {
				os.MkdirAll(filepath.Dir(filepath.Join(project, name)), 0o755)
				os.WriteFile(filepath.Join(project, name), []byte(body), 0o644)
			}
			for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=a@x", "-c", "user.name=a", "commit", "-qm", "team"}} {
				c := exec.Command("git", args...)
				c.Dir = project
				if out, err := c.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			e, _ := hookEnv(t, project)
			src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			tr := filepath.Join(t.TempDir(), "s.jsonl")
			os.WriteFile(tr, src, 0o600)
			for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd"} {
				runSnap(e, ev, map[string]any{"session_id": "s1", "transcript_path": tr, "cwd": project, "source": "startup"})
			}
			for name, body := range team {
				if b, _ := os.ReadFile(filepath.Join(project, name)); string(b) != body {
					t.Errorf("%s was edited: %q", name, b)
				}
			}
			home := e.Getenv("HOME")
			filepath.WalkDir(home, func(p string, d os.DirEntry, _ error) error {
				if rel, _ := filepath.Rel(home, p); rel != "." && !strings.HasPrefix(rel, ".carryover") {
					t.Errorf("wrote in $HOME: %s", rel)
				}
				return nil
			})
			var so, se bytes.Buffer
			e.Stdout, e.Stderr, e.WorkDir = &so, &se, project
			Main([]string{"carryover", "status"}, e)
			want := []string{"AGENTS.md", "CLAUDE.md"}
			if claimed {
				want = append(want, filepath.Join(".carryover", ".gitignore"))
			}
			line := ""
			for l := range strings.Lines(so.String()) {
				if strings.Contains(l, "left alone here") {
					line = l
				}
			}
			for _, w := range want {
				if !strings.Contains(line, w) {
					t.Errorf("status does not say %s is left alone: %q\n%s%s", w, line, so.String(), se.String())
				}
			}
			if strings.Contains(line, ".carryover/handoff.md") {
				t.Errorf("status names an untracked handoff.md: %q", line)
			}
			so.Reset()
			Main([]string{"carryover", "status", "--json"}, e)
			if !strings.Contains(so.String(), `"left_alone"`) {
				t.Errorf("status --json has no left_alone: %s", so.String())
			}
		})
	}
}
