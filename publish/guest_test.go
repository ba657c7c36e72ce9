package publish_test

import (
	"errors"
	"fmt"
	"github.com/carryover/carryover/publish/config"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/publish"
)

// guestProject is a project whose AGENTS.md and .gitignore belong to a
// team (bytes chosen to catch any normalisation: CRLF, no final newline).
func guestProject(t *testing.T) (home, dir string, files map[string]string) {
	t.Helper()
	root := t.TempDir()
	home, dir = filepath.Join(root, "carryover-home"), filepath.Join(root, "src", "team")
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	files = map[string]string{"AGENTS.md": "# Team rules\r\nUse tabs.\r\n", ".gitignore": "node_modules/\n*.log"}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home, dir, files
}

func sameFiles(t *testing.T, dir string, files map[string]string, absent ...string) {
	t.Helper()
	for n, want := range files {
		if got, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q byte for byte", n, got, err, want)
		}
	}
	for _, n := range absent {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s exists", n)
		}
	}
}

// TestWriteProjectIsAGuest: the default (auto, no agent needing the block)
// touches no file of the project's own; .carryover/ ignores itself.
func TestWriteProjectIsAGuest(t *testing.T) {
	home, dir, files := guestProject(t)
	p := &publish.Project{Root: dir, Home: home, Pointer: publish.PointerAuto}
	if err := p.WriteProject("# [CARRYOVER] test\nbody\n", "claude"); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, dir, files, "CLAUDE.md", "GEMINI.md")
	if b, _ := os.ReadFile(filepath.Join(dir, ".carryover", ".gitignore")); string(b) != publish.OwnGitignore {
		t.Errorf(".carryover/.gitignore = %q", b)
	}
	// never: the same, even for an agent that would need it.
	p.Pointer, p.PointerFor = publish.PointerNever, []string{"windsurf"}
	p.WriteProject("# [CARRYOVER] test\nbody 2\n", "windsurf")
	sameFiles(t, dir, files, "CLAUDE.md", "GEMINI.md")
}

// TestPointerWhereNeeded: auto writes AGENTS.md and the memory file of
// the agent that needs the block only (never a CLAUDE.md for Claude Code
// when another agent needs it); always writes everywhere. Purge restores
// every file byte for byte and deletes what carryover created.
func TestPointerWhereNeeded(t *testing.T) {
	home, dir, files := guestProject(t)
	p := &publish.Project{Root: dir, Home: home, Pointer: publish.PointerAuto, PointerFor: []string{"gemini"}}
	if err := p.WriteProject("# [CARRYOVER] test\nbody\n", "claude"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"AGENTS.md", "GEMINI.md"} {
		if b, _ := os.ReadFile(filepath.Join(dir, n)); !strings.Contains(string(b), "<!--CARRYOVER:START-->") {
			t.Errorf("%s lacks the block: %q", n, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "AGENTS.md")); !strings.HasPrefix(string(b), files["AGENTS.md"]) {
		t.Errorf("AGENTS.md's own text changed: %q", b)
	}
	sameFiles(t, dir, map[string]string{".gitignore": files[".gitignore"]}, "CLAUDE.md")

	p.Pointer = publish.PointerAlways
	p.WriteProject("# [CARRYOVER] test\nbody 2\n", "claude")
	if b, _ := os.ReadFile(filepath.Join(dir, "CLAUDE.md")); string(b) != publish.PointerBlock {
		t.Errorf("always: CLAUDE.md = %q", b)
	}

	dry := publish.Purge(home, dir, nil, true)
	if len(dry) != 4 { // AGENTS.md, CLAUDE.md, GEMINI.md, .carryover/
		t.Errorf("dry run: %v", dry)
	}
	if _, err := os.Stat(filepath.Join(dir, "CLAUDE.md")); err != nil {
		t.Fatalf("the dry run changed something: %v", err)
	}
	for _, s := range publish.Purge(home, dir, nil, false) {
		if s.Err != nil {
			t.Errorf("purge: %v", s)
		}
	}
	sameFiles(t, dir, files, "CLAUDE.md", "GEMINI.md", ".carryover")
}

// TestPurgeLeavesChangedFilesAlone: a file changed outside the block
// since carryover wrote it is never touched; an earlier carryover's
// .gitignore entry and appended block (no record) are taken out.
func TestPurgeLeavesChangedFilesAlone(t *testing.T) {
	home, dir, _ := guestProject(t)
	p := &publish.Project{Root: dir, Home: home, Pointer: publish.PointerAlways}
	p.WriteProject("# [CARRYOVER] test\nbody\n", "claude")
	edited := "# my own notes\n" + publish.PointerBlock
	os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte(edited), 0o644)
	legacyGemini := "Be brief.\n\n" + publish.PointerBlock // shape of an old append, no record
	os.WriteFile(filepath.Join(dir, "GEMINI.md"), []byte(legacyGemini), 0o644)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("dist/\n"+publish.GitignoreComment+"\n.carryover/\n"), 0o644)
	var left []string
	for _, s := range publish.Purge(home, dir, nil, false) {
		if s.Err != nil {
			left = append(left, filepath.Base(s.Path))
		}
	}
	if strings.Join(left, ",") != "CLAUDE.md" {
		t.Errorf("left alone: %v, want CLAUDE.md only", left)
	}
	sameFiles(t, dir, map[string]string{"CLAUDE.md": edited, "GEMINI.md": "Be brief.\n", ".gitignore": "dist/\n", "AGENTS.md": "# Team rules\r\nUse tabs.\r\n"})
}

func TestNotProject(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home", "u")
	os.MkdirAll(filepath.Join(home, "src", "app"), 0o755)
	for dir, want := range map[string]bool{
		home: true, filepath.Dir(home): true, filepath.Dir(filepath.Dir(home)): true, "/": true, "": true,
		filepath.Join(home, "src"): false, filepath.Join(home, "src", "app"): false, home + "2": false,
	} {
		if got := publish.NotProject(dir, home); got != want {
			t.Errorf("NotProject(%q) = %v, want %v", dir, got, want)
		}
	}
	// Nothing is written for such a root.
	p := &publish.Project{Root: home, Home: filepath.Join(t.TempDir(), "co"), NotProject: true, Pointer: publish.PointerAlways}
	if err := p.WriteProject("# [CARRYOVER] x\n", "claude"); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(home)
	if len(ents) != 1 || ents[0].Name() != "src" {
		t.Errorf("files written in the home directory: %v", ents)
	}
}

// TestProjectPointerOnlyStricter: a project file may move pointer towards
// never, not towards always (unless the user trusts the project).
func TestProjectPointerOnlyStricter(t *testing.T) {
	for _, tc := range []struct{ global, project, want string }{
		{"auto", "never", "never"}, {"auto", "always", "auto"}, {"never", "auto", "never"}, {"always", "auto", "auto"}, {"", "always", ""},
	} {
		g := config.Config{Pointer: tc.global}
		c := config.ProjectPolicy(g, config.Config{Pointer: tc.project}, map[string]any{"pointer": tc.project}, "/p", "/p/.carryover.toml")
		if c.Pointer != tc.want {
			t.Errorf("global %q, project %q: pointer %q, want %q", tc.global, tc.project, c.Pointer, tc.want)
		}
	}
	if !(config.Config{Ignore: []string{"/work/client"}}).Ignores("/work/client/app") {
		t.Errorf("a directory under an ignored one is not ignored")
	}
	if (config.Config{Ignore: []string{"/work/client"}}).Ignores("/work/client2") {
		t.Errorf("a sibling with the same prefix is ignored")
	}
}

// TestPointerLeavesTrackedTeamFiles: under auto, an AGENTS.md the project's git tracks is a team file — the block
// would show in `git status` and ride the next `git commit -a`, with no command of the user's asking for it
// (redteam3: a Stop with Aider among the user's tools edited a cloned repository's AGENTS.md). It is left byte for
// byte and the log says how to ask for it; an untracked memory file still gets the block, and always still writes.
func TestPointerLeavesTrackedTeamFiles(t *testing.T) {
	home, dir, files := guestProject(t)
	os.RemoveAll(filepath.Join(dir, ".git"))
	for _, args := range [][]string{{"init", "-q"}, {"add", "AGENTS.md"}, {"commit", "-qm", "team"}} {
		if out, err := gitCmd(dir, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	var logged []string
	p := &publish.Project{Root: dir, Home: home, Pointer: publish.PointerAuto, PointerFor: []string{"gemini"},
		Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
	if err := p.WriteProject("# [CARRYOVER] test\nbody\n", "claude"); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, dir, map[string]string{"AGENTS.md": files["AGENTS.md"]})
	if b, _ := os.ReadFile(filepath.Join(dir, "GEMINI.md")); string(b) != publish.PointerBlock {
		t.Errorf("untracked GEMINI.md = %q, want the block", b)
	}
	if !strings.Contains(strings.Join(logged, "\n"), "AGENTS.md is tracked by git") {
		t.Errorf("log = %q, want why AGENTS.md was left alone", logged)
	}
	p.Pointer = publish.PointerAlways
	p.WriteProject("# [CARRYOVER] test\nbody 2\n", "claude")
	if b, _ := os.ReadFile(filepath.Join(dir, "AGENTS.md")); !strings.Contains(string(b), "<!--CARRYOVER:START-->") {
		t.Errorf("always: AGENTS.md lacks the block: %q", b)
	}
}

func gitCmd(dir string, args ...string) *exec.Cmd {
	c := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t", "-c", "core.hooksPath=/dev/null"}, args...)...)
	c.Dir = dir
	return c
}

// TestPurgeKeepsTrackedCarryoverDir: `uninstall --purge` deleted a .carryover/ whose files the repository committed
// (a config.toml, a history file): the dry run said "carryover's handoff, history and resume prompts" and `git status`
// then showed the team's files deleted (redteam3). Any tracked file under it leaves the directory alone, named.
func TestPurgeKeepsTrackedCarryoverDir(t *testing.T) {
	home, dir, _ := guestProject(t)
	planted := filepath.Join(dir, ".carryover", "history", "config.toml")
	os.MkdirAll(filepath.Dir(planted), 0o755)
	os.WriteFile(planted, []byte("team\n"), 0o644)
	tracked := func(p string) bool { return p == planted }
	for _, dry := range []bool{true, false} {
		steps := publish.Purge(home, dir, tracked, dry)
		if len(steps) != 1 || steps[0].Action != "left alone" || steps[0].Err == nil || !strings.Contains(steps[0].Err.Error(), "config.toml") {
			t.Errorf("dry=%v: steps %+v, want .carryover/ left alone naming the tracked file", dry, steps)
		}
	}
	if _, err := os.Stat(planted); err != nil {
		t.Errorf("the tracked file went: %v", err)
	}
}

// TestTrackedCarryoverGitignore: a repository that commits .carryover/.gitignore (here re-including everything) has
// claimed the directory: rewriting that file edited a team file silently (`M .carryover/.gitignore`, redteam3), and
// writing beside it would put the handoff in the next `git add -A`. Nothing is written there; the error says why.
func TestTrackedCarryoverGitignore(t *testing.T) {
	home, dir, _ := guestProject(t)
	os.RemoveAll(filepath.Join(dir, ".git"))
	own := filepath.Join(dir, ".carryover", ".gitignore")
	os.MkdirAll(filepath.Dir(own), 0o755)
	os.WriteFile(own, []byte("!*\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", ".carryover/.gitignore"}, {"commit", "-qm", "team"}} {
		if out, err := gitCmd(dir, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	p := &publish.Project{Root: dir, Home: home, Pointer: publish.PointerAuto}
	if err := p.WriteProject("# [CARRYOVER] test\nbody\n", "claude"); !errors.Is(err, publish.ErrTracked) {
		t.Errorf("WriteProject: %v, want ErrTracked", err)
	}
	sameFiles(t, dir, map[string]string{".carryover/.gitignore": "!*\n"}, ".carryover/handoff.md")
}
