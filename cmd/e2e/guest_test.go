package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A guest in the user's repository (issue 24), proven with the real Claude
// Code and Codex: a team repository's tracked files are never touched by
// default, the handoff still travels between sessions, the pointer block
// is written when asked, and `uninstall --purge` puts every byte back.

// teamFiles are a team's tracked AGENTS.md and .gitignore.
var teamFiles = map[string]string{
	"AGENTS.md":  "# Team rules\n\nRun `make test` before pushing.\n",
	".gitignore": "node_modules/\n*.log\n",
}

// teamRepo is a git project whose AGENTS.md and .gitignore are committed.
func teamRepo(t *testing.T, w *workspace, name string) string {
	t.Helper()
	dir := w.project(t, name)
	for n, b := range teamFiles {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "AGENTS.md", ".gitignore")
	git(t, dir, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "team files")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, append(BaseEnv(t.TempDir()), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// porcelain is `git status --porcelain --ignored=no` in dir.
func porcelain(t *testing.T, dir string) string {
	t.Helper()
	return git(t, dir, "status", "--porcelain")
}

// readOnlyTurns is a session that changes no file of the project: it
// reads, runs a command that fails, decides and names its next step.
func readOnlyTurns(tool, dir string, s story) []Turn {
	final := Turn{Text: "The test run failed: there is no tests/ directory yet. " + s.Next()}
	if tool == "codex" {
		return []Turn{
			{Text: "I'll read the README first.", Calls: []Call{{Name: "shell", Args: map[string]any{"command": "cat README.md"}}}},
			{Text: storyDecision, Calls: []Call{{Name: "shell", Args: map[string]any{"command": storyFailCmd}}}},
			final,
		}
	}
	return []Turn{
		{Text: "I'll read the README first.", Calls: []Call{{Name: "Read", Args: map[string]any{"file_path": filepath.Join(dir, "README.md")}}}},
		{Text: storyDecision, Calls: []Call{{Name: "Bash", Args: map[string]any{"command": storyFailCmd, "description": "Run the unit tests"}}}},
		final,
	}
}

func sameTeamFiles(t *testing.T, dir, when string) {
	t.Helper()
	for n, want := range teamFiles {
		if got, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(got) != want {
			t.Errorf("%s: %s = %q (%v), want the team's bytes %q", when, n, got, err, want)
		}
	}
}

// TestGuestTeamRepo: Claude Code and Codex in a team repository. After a
// session and each next session's start (which receives the handoff), `git
// status` shows nothing; with pointer = "always" the block is there; `carryover
// uninstall --purge --yes` restores AGENTS.md and .gitignore byte for byte and
// deletes the CLAUDE.md carryover created.
func TestGuestTeamRepo(t *testing.T) {
	w := newWorkspace(t, "claude", "codex")
	dir := teamRepo(t, w, "teamlib")
	env := BaseEnv(w.home)
	s := story{Word: "backoff"}

	runAgent(t, "claude", w.home, dir, s.Task(), readOnlyTurns("claude", dir, s), runOpts{})
	if h := w.handoff(t, dir); !strings.Contains(h, s.Task()) || !strings.Contains(h, s.Next()) {
		t.Fatalf("session 1's handoff lacks the task or the next step:\n%s", h)
	}
	if st := porcelain(t, dir); st != "" {
		t.Errorf("after a Claude Code session, git status shows:\n%s\ncarryover.log:\n%s", st, w.log())
	}

	r := runAgent(t, "codex", w.home, dir, "continue", []Turn{{Text: "Resuming. " + s.Next()}}, runOpts{})
	checkDelivered(t, r.first(t), s, "claude")
	r = runAgent(t, "claude", w.home, dir, "continue", []Turn{{Text: "Resuming. " + s.Next()}}, runOpts{})
	if first := r.first(t); !strings.Contains(first, "[CARRYOVER]") || !strings.Contains(first, s.Task()) {
		t.Errorf("Claude Code's next session did not start with the handoff:\n%.2000s", first)
	}
	if st := porcelain(t, dir); st != "" {
		status, _, _ := runCarryover(t, env, dir, "status")
		t.Errorf("after Codex and Claude Code sessions, git status shows:\n%s\ncarryover.log:\n%s\nstatus:\n%s", st, w.log(), status)
	}
	sameTeamFiles(t, dir, "pointer = auto")
	for _, n := range []string{"CLAUDE.md", "GEMINI.md"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s was created although Claude Code's and Codex's injection works", n)
		}
	}

	// pointer = "always": the block is written (CLAUDE.md created).
	if out, errb, code := runCarryover(t, env, dir, "config", "set", "pointer", "always"); code != 0 {
		t.Fatalf("config set pointer always: %d %s %s", code, out, errb)
	}
	runAgent(t, "claude", w.home, dir, "continue", []Turn{{Text: "Still on it. " + s.Next()}}, runOpts{})
	for _, n := range []string{"AGENTS.md", "CLAUDE.md"} {
		b, _ := os.ReadFile(filepath.Join(dir, n))
		if !strings.Contains(string(b), "<!--CARRYOVER:START-->") || strings.Contains(string(b), s.Word) {
			t.Errorf("pointer = always: %s lacks the block or carries task data:\n%s", n, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "AGENTS.md")); !strings.HasPrefix(string(b), teamFiles["AGENTS.md"]) {
		t.Errorf("the team's AGENTS.md text changed:\n%s", b)
	}
	if st := porcelain(t, dir); !strings.Contains(st, " M AGENTS.md") || !strings.Contains(st, "?? CLAUDE.md") {
		t.Errorf("pointer = always: git status = %q", st)
	}

	// uninstall --purge: --dry-run lists, changes nothing; --yes restores.
	out, _, code := runCarryover(t, env, dir, "uninstall", "--purge", "--dry-run")
	for _, want := range []string{"project  " + dir, "would restore " + filepath.Join(dir, "AGENTS.md"), "would delete " + filepath.Join(dir, "CLAUDE.md")} {
		if !strings.Contains(out, want) {
			t.Errorf("uninstall --purge --dry-run lacks %q:\n%s", want, out)
		}
	}
	if code != 0 || !strings.Contains(porcelain(t, dir), "?? CLAUDE.md") {
		t.Fatalf("the dry run exited %d or changed files", code)
	}
	out, errb, code := runCarryover(t, env, dir, "uninstall", "--purge", "--yes")
	if code != 0 {
		t.Fatalf("uninstall --purge --yes: %d\n%s\n%s", code, out, errb)
	}
	sameTeamFiles(t, dir, "after uninstall --purge")
	if st := porcelain(t, dir); st != "" {
		t.Errorf("after uninstall --purge, git status shows:\n%s\n%s", st, out)
	}
	for _, p := range []string{filepath.Join(dir, "CLAUDE.md"), filepath.Join(dir, ".carryover"), filepath.Join(w.home, ".carryover", "ledger.sqlite")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there after uninstall --purge --yes:\n%s", p, out)
		}
	}
}

// homeEntries lists what is in home, apart from the agents' own state
// and carryover's home (~/.carryover, where the ledger lives).
func homeEntries(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	ents, _ := os.ReadDir(home)
	for _, d := range ents {
		switch n := d.Name(); {
		case n == ".carryover", strings.HasPrefix(n, ".claude"), strings.HasPrefix(n, ".codex"), n == ".cache", n == ".config", n == ".local", n == ".npm":
		default:
			out = append(out, n)
		}
	}
	return out
}

// TestGuestHomeIsNotAProject: a Claude Code session started in $HOME
// writes no file there (no AGENTS.md, CLAUDE.md, .gitignore; no project
// files in ~/.carryover, the ledger's own folder); the next session there
// still starts with the handoff, and `carryover handoff` prints it.
func TestGuestHomeIsNotAProject(t *testing.T) {
	w := newWorkspace(t, "claude")
	os.MkdirAll(w.home, 0o755)
	before := homeEntries(t, w.home)
	s := story{Word: "homework"}
	runAgent(t, "claude", w.home, w.home, s.Task(), readOnlyTurns("claude", w.home, s), runOpts{})
	r := runAgent(t, "claude", w.home, w.home, "continue", []Turn{{Text: "Resuming. " + s.Next()}}, runOpts{})
	checkDelivered(t, r.first(t), s, "claude")
	out, errb, code := runCarryover(t, BaseEnv(w.home), w.home, "handoff", "--stdout", "--no-clipboard")
	if code != 0 || !strings.Contains(out, s.Task()) || !strings.Contains(errb, "no file written") {
		t.Errorf("carryover handoff in $HOME: %d\n%s\n%s", code, out, errb)
	}
	if after := homeEntries(t, w.home); !slices.Equal(before, after) {
		t.Errorf("$HOME changed: %v → %v\ncarryover.log:\n%s", before, after, w.log())
	}
	for _, n := range []string{"history", ".gitignore", "RESUME.md", "session.json"} {
		if _, err := os.Lstat(filepath.Join(w.home, ".carryover", n)); err == nil {
			t.Errorf("~/.carryover/%s was written: the home directory was treated as a project", n)
		}
	}
}

// TestGuestIgnoreAndForget: an ignored project gets no file and no ledger
// row (and no log line); `carryover forget` leaves no byte of a session in
// the ledger or its WAL.
func TestGuestIgnoreAndForget(t *testing.T) {
	w := newWorkspace(t, "claude")
	env := BaseEnv(w.home)
	private := w.project(t, "private")
	if out, errb, code := runCarryover(t, env, private, "ignore"); code != 0 || !strings.Contains(out, "ignored: "+private) {
		t.Fatalf("carryover ignore: %d %s %s", code, out, errb)
	}
	if out, _, _ := runCarryover(t, env, private, "ignore", "--list"); strings.TrimSpace(out) != private {
		t.Errorf("ignore --list = %q", out)
	}
	secret := story{Word: "zanzibar"}
	runAgent(t, "claude", w.home, private, secret.Task(), readOnlyTurns("claude", private, secret), runOpts{})
	if _, err := os.Lstat(filepath.Join(private, ".carryover")); err == nil {
		t.Errorf("the ignored project got a .carryover")
	}
	if st := porcelain(t, private); st != "" {
		t.Errorf("the ignored project changed: %s", st)
	}
	if ss := w.sessions(t, private, "claude"); len(ss) != 0 {
		t.Errorf("the ignored project's session is in the ledger: %+v", ss)
	}
	if strings.Contains(w.log(), "private") || strings.Contains(w.log(), secret.Word) {
		t.Errorf("carryover.log mentions the ignored project:\n%s", w.log())
	}
	if out, _, _ := runCarryover(t, env, private, "status"); !strings.Contains(out, "ignored projects: "+private) {
		t.Errorf("status does not show the ignored project:\n%s", out)
	}

	dir := w.project(t, "scratch")
	s := story{Word: "quokka"}
	runAgent(t, "claude", w.home, dir, s.Task(), readOnlyTurns("claude", dir, s), runOpts{})
	ss := w.sessions(t, dir, "claude")
	if len(ss) != 1 {
		t.Fatalf("sessions in scratch: %+v", ss)
	}
	id := ss[0].NativeID
	ledgerHas := func(what string) []string {
		var in []string
		for _, f := range []string{"ledger.sqlite", "ledger.sqlite-wal"} {
			if b, _ := os.ReadFile(filepath.Join(w.home, ".carryover", f)); bytes.Contains(b, []byte(what)) {
				in = append(in, f)
			}
		}
		return in
	}
	if len(ledgerHas(s.Word)) == 0 {
		t.Fatalf("the session's words are not in the ledger to begin with")
	}
	out, errb, code := runCarryover(t, env, dir, "forget", id, "--dry-run")
	if code != 0 || !strings.Contains(out, "would forget claude session "+id) || len(ledgerHas(s.Word)) == 0 {
		t.Fatalf("forget --dry-run: %d\n%s\n%s", code, out, errb)
	}
	out, errb, code = runCarryover(t, env, dir, "forget", id)
	if code != 0 || !strings.Contains(out, "forgot claude session "+id) {
		t.Fatalf("forget: %d\n%s\n%s", code, out, errb)
	}
	for _, what := range []string{s.Word, id} {
		if in := ledgerHas(what); len(in) > 0 {
			t.Errorf("after forget, %v still hold %q", in, what)
		}
	}
	if len(w.sessions(t, dir, "claude")) != 0 {
		t.Errorf("the session is still in the ledger")
	}
	if _, err := os.Stat(filepath.Join(dir, ".carryover", "handoff.md")); err == nil {
		t.Errorf("the handoff written from the forgotten session is still there")
	}
	if out, _, _ := runCarryover(t, env, dir, "history"); !strings.Contains(out, "forgotten") {
		t.Errorf("history does not say the handoff was forgotten:\n%s", out)
	}
}
