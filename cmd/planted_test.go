package cmd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish"
	"github.com/carryover/carryover/publish/resume"
	"github.com/carryover/carryover/publish/service"
)

// TestRealworldCommittedAider puts each aider history of the realworld
// corpus where the repositories it came from had it — committed at the
// project root — and checks what issue 21 asks: `handoff` with no flags
// never takes it for the user's session (it says it passed it over), while
// `handoff --transcript` still reads it in full, under a ledger key of its
// own, so the project has no session from it. `just realworld` runs it.
func TestRealworldCommittedAider(t *testing.T) {
	dir := realworldDir()
	files, _ := filepath.Glob(filepath.Join(dir, "aider", "*"))
	if len(files) == 0 {
		if os.Getenv("CI") == "true" { // as TestRealworldCorpus: CI has the corpus beside the clone
			t.Fatalf("no aider histories in the realworld corpus at %s (set CARRYOVER_REALWORLD)", dir)
		}
		t.Skipf("no aider histories in the realworld corpus at %s", dir)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to build the repositories")
	}
	sort.Strings(files)
	auto, named := 0, 0
	for _, f := range files {
		proj := t.TempDir()
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(proj, ".aider.chat.history.md"), b, 0o644)
		for _, args := range [][]string{{"init", "-q"}, {"add", ".aider.chat.history.md"}} {
			c := exec.Command("git", args...)
			c.Dir = proj
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		home := t.TempDir()
		e, _, errb := manualEnv(t, map[string]string{"CARRYOVER_HOME": home}, func(string) error { return nil })
		rc := Main([]string{"carryover", "handoff", "--project", proj, "--stdout", "--no-clipboard"}, e)
		if rc == 0 {
			auto++
			t.Errorf("%s: handoff took the committed history for the user's session", filepath.Base(f))
		} else if !strings.Contains(errb.String(), "its file is tracked by git") {
			t.Errorf("%s: exit %d without saying why:\n%s", filepath.Base(f), rc, errb)
		}
		e, out, errb := manualEnv(t, map[string]string{"CARRYOVER_HOME": home}, func(string) error { return nil })
		rc = Main([]string{"carryover", "handoff", "--project", proj, "--transcript", filepath.Join(proj, ".aider.chat.history.md"), "--source", "aider",
			"--format", "json", "--stdout", "--no-clipboard"}, e)
		var h resume.Handoff
		if rc != 0 || json.Unmarshal(out.Bytes(), &h) != nil || strings.TrimSpace(h.Goal) == "" {
			t.Errorf("%s: --transcript: exit %d, goal %q\n%s", filepath.Base(f), rc, h.Goal, errb)
			continue
		}
		named++
		l, err := ledger.Open(home)
		if err != nil {
			t.Fatal(err)
		}
		if ss, _ := l.Sessions(proj, "", 10); len(ss) != 0 {
			t.Errorf("%s: the imported history became %d session(s) of the project", filepath.Base(f), len(ss))
		}
		l.Close()
	}
	t.Logf("committed aider histories: %d, taken automatically %d, read with --transcript %d", len(files), auto, named)
}

// TestNotYoursEveryAgent: the choice rule is the same for every agent's
// lister, not aider's alone: a session dated in the future (a Codex
// rollout, a Gemini file, a Copilot CLI events file) is passed over, one
// within the clock slack is not, and a file the project's git tracks is
// passed over whatever its agent.
func TestNotYoursEveryAgent(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to build the repository")
	}
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "session.jsonl"), []byte("{}\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "session.jsonl"}} {
		c := exec.Command("git", args...)
		c.Dir = proj
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	e, _, _ := manualEnv(t, nil, nil)
	now := e.Now()
	mk := func(tool, id string, at time.Time, path string) candidate {
		return candidate{NativeSession: adapters.NativeSession{Tool: tool, ID: id, LastActive: at, Path: path, Project: proj}}
	}
	cs := []candidate{
		mk("codex", "future-codex", now.Add(24*365*time.Hour), "/home/u/.codex/sessions/r.jsonl"),
		mk("gemini", "future-gemini", now.Add(time.Hour), "/home/u/.gemini/tmp/x/chats/s.json"),
		mk("copilot-cli", "tracked-copilot", now.Add(-time.Minute), filepath.Join(proj, "session.jsonl")),
		mk("claude", "skewed-claude", now.Add(2*time.Minute), "/home/u/.claude/projects/p/s.jsonl"),
		mk("codex", "old-codex", now.Add(-48*time.Hour), "/home/u/.codex/sessions/o.jsonl"),
	}
	service.MarkNotYours(e.Now(), cs)
	got, note := yours(cs)
	var ids []string
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != "skewed-claude,old-codex" {
		t.Errorf("chosen from %v; want skewed-claude and old-codex", ids)
	}
	for _, want := range []string{"future-codex", "future-gemini", service.NotYoursFuture, "tracked-copilot", service.NotYoursTracked} {
		if !strings.Contains(note, publish.ShortID(want)) && !strings.Contains(note, want) {
			t.Errorf("the note does not name %q: %s", want, note)
		}
	}
}

// TestRunTakesItsOwnAiderSession: in a history the repository tracks,
// `carryover run -- aider` still reads the session it started (begun since
// the run), never the committed ones before it.
func TestRunTakesItsOwnAiderSession(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to build the repository")
	}
	proj := t.TempDir()
	e, _, _ := manualEnv(t, nil, nil)
	started := e.Now().Add(-time.Hour)
	hdr := func(at time.Time, task string) string {
		return "\n# aider chat started at " + at.In(time.Local).Format("2006-01-02 15:04:05") + "\n\n#### " + task + "  \n\nOk.\n\n"
	}
	os.WriteFile(filepath.Join(proj, ".aider.chat.history.md"), []byte(hdr(started.Add(-72*time.Hour), "the committed task")), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", ".aider.chat.history.md"}} {
		c := exec.Command("git", args...)
		c.Dir = proj
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if _, err := pick(e, selection{source: "aider", project: proj, since: started}); err == nil {
		t.Fatal("run took a committed session from before it started")
	}
	f, _ := os.OpenFile(filepath.Join(proj, ".aider.chat.history.md"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(hdr(started.Add(10*time.Minute), "the user's task in this run"))
	f.Close()
	p, err := pick(e, selection{source: "aider", project: proj, since: started})
	if err != nil || !strings.Contains(p.Preview, "this run") {
		t.Fatalf("pick = %+v, %v; want the session the run started", p.NativeSession, err)
	}
	if _, err := pick(e, selection{source: "aider", project: proj}); err == nil {
		t.Error("without the run's start, a tracked history was taken")
	}
}

// TestConfigSetProjectFIFO: a repository can ship .carryover.toml as a FIFO; `config set|unset --project` opened it
// for reading and waited forever (redteam3). They now read it as the hook does — a regular file, never blocking — and
// say why they wrote nothing.
func TestConfigSetProjectFIFO(t *testing.T) {
	proj := t.TempDir()
	if err := exec.Command("mkfifo", filepath.Join(proj, ".carryover.toml")).Run(); err != nil {
		t.Fatalf("mkfifo: %v (the test needs a FIFO; CI runs on Linux)", err)
	}
	for _, args := range [][]string{{"set", "--project-dir", proj, "resume", "ask"}, {"unset", "--project-dir", proj, "resume"}} {
		e, _, errb := manualEnv(t, map[string]string{"CARRYOVER_HOME": t.TempDir()}, nil)
		done := make(chan int, 1)
		go func() { done <- Main(append([]string{"carryover", "config"}, args...), e) }()
		select {
		case rc := <-done:
			if rc == 0 || !strings.Contains(errb.String(), ".carryover.toml") {
				t.Errorf("config %s: exit %d, stderr %q; want a failure naming the file", args[0], rc, errb)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("config %s blocked on a FIFO .carryover.toml", args[0])
		}
	}
}

// TestHandoffTrackedCarryoverGitignore: a repository that commits .carryover/.gitignore has claimed the directory;
// `handoff --stdout` still prints the prompt (exit 0), says why RESUME.md was not written, and leaves the file as the
// repository has it.
func TestHandoffTrackedCarryoverGitignore(t *testing.T) {
	project := t.TempDir()
	own := filepath.Join(project, ".carryover", ".gitignore")
	os.MkdirAll(filepath.Dir(own), 0o755)
	os.WriteFile(own, []byte("!*\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", ".carryover/.gitignore"}} {
		c := exec.Command("git", args...)
		c.Dir = project
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	tr := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(tr, []byte(`{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"fix the parser"},"uuid":"u1","timestamp":"2026-11-21T10:00:00Z","sessionId":"s1"}`+"\n"), 0o600)
	e, out, errb := manualEnv(t, map[string]string{"CARRYOVER_HOME": t.TempDir()}, nil)
	if rc := Main([]string{"carryover", "handoff", "--transcript", tr, "--source", "claude", "--project", project, "--stdout", "--no-clipboard"}, e); rc != 0 || !strings.Contains(out.String(), "fix the parser") {
		t.Fatalf("exit %d, stdout %q, stderr %s", rc, out, errb)
	}
	if !strings.Contains(errb.String(), "is tracked by git") {
		t.Errorf("stderr does not say why nothing was written: %s", errb)
	}
	if b, _ := os.ReadFile(own); string(b) != "!*\n" {
		t.Errorf(".carryover/.gitignore = %q, want the repository's", b)
	}
	if _, err := os.Stat(filepath.Join(project, ".carryover", "RESUME.md")); err == nil {
		t.Error("RESUME.md was written beside a tracked .carryover/.gitignore")
	}
}
