package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claudeEvents are the events carryover hooks in Claude Code.
var claudeEvents = []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop", "StopFailure", "PreCompact", "SessionEnd"}

func claudeHooks() map[string]string {
	hooks := map[string]string{}
	for _, ev := range claudeEvents {
		hooks[ev] = hookCommand("claude", ev)
	}
	return hooks
}

// claudeProject is a temp HOME with carryover's hooks in Claude Code's user
// settings and a git project with a README.
type claudeProject struct {
	home, dir string
}

func newClaudeProject(t *testing.T) claudeProject {
	t.Helper()
	root := t.TempDir()
	p := claudeProject{home: filepath.Join(root, "home"), dir: filepath.Join(root, "src", "retrylib")}
	InitGitRepo(t, p.dir)
	if err := WriteClaudeHooks(p.home, claudeHooks()); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p claudeProject) handoff(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, ".carryover", "handoff.md"))
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(p.home, ".carryover", "carryover.log"))
		t.Fatalf("no handoff: %v\ncarryover.log:\n%s", err, log)
	}
	return string(b)
}

// retryScript is the scripted first session: a Write, an Edit of a second
// file, a Bash command that really fails, a decision and a next step.
func retryScript(dir string) []Turn {
	retry := filepath.Join(dir, "retry.py")
	return []Turn{
		{Text: "I'll create the retry helper first.", Calls: []Call{{Name: "Write", Args: map[string]any{
			"file_path": retry, "content": "def retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()\n        except Exception:\n            pass\n"}}}},
		{Calls: []Call{{Name: "Read", Args: map[string]any{"file_path": filepath.Join(dir, "README.md")}}}},
		{Calls: []Call{{Name: "Edit", Args: map[string]any{"file_path": filepath.Join(dir, "README.md"),
			"old_string": "# demo\n", "new_string": "# demo\n\nretry(fn) retries fn up to three times.\n"}}}},
		{Text: "We decided to use a plain loop instead of a decorator because the helper must stay dependency-free.", Calls: []Call{{Name: "Bash", Args: map[string]any{
			"command": "ls tests/ && python3 -m unittest", "description": "Run the unit tests"}}}},
		{Text: "The test run failed: there is no tests/ directory yet. Next I will add the retry test in tests/test_retry.py."},
	}
}

const retryTask = "Add a retry helper in retry.py, document it, and run the tests"

// TestClaudeEndToEnd drives the real Claude Code CLI through a session that
// edits files and fails a command, then checks the handoff, and that the
// next session's first model request carries it.
func TestClaudeEndToEnd(t *testing.T) { claudeEndToEnd(t, "") }

// claudeEndToEnd is TestClaudeEndToEnd against the claude executable bin (the
// pinned one when empty).
func claudeEndToEnd(t *testing.T, bin string) {
	p := newClaudeProject(t)
	fake := NewAnthropic(t, retryScript(p.dir))
	res := RunClaude(t, ClaudeOpts{Bin: bin, Home: p.home, Dir: p.dir, BaseURL: fake.URL(), Prompt: retryTask})
	if res.ExitCode != 0 || fake.Played() != 5 {
		t.Fatalf("session 1: played %d/5: %s", fake.Played(), res)
	}
	h := p.handoff(t)
	t.Logf("handoff.md after session 1:\n%s", h)
	for _, want := range []string{
		"# [CARRYOVER] Last updated ", " from claude · HO-", "# RESUME PROTOCOL: ask",
		retryTask, "retry.py", "README.md", "ls tests/ && python3 -m unittest", "exit 2", "cannot access",
		"We decided to use a plain loop instead of a decorator", "Next I will add the retry test in tests/test_retry.py.",
		"branch main @ ",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("handoff lacks %q:\n%s", want, h)
		}
	}
	if n := strings.Count(h, "\n"); n > 50 {
		t.Errorf("handoff has %d lines", n)
	}
	// A guest in the repository (issue 24): Claude Code's injection works,
	// so no pointer block, no CLAUDE.md, no .gitignore edit; git ignores
	// .carryover/ through its own .gitignore.
	for _, f := range []string{"AGENTS.md", "CLAUDE.md", ".gitignore"} {
		if b, err := os.ReadFile(filepath.Join(p.dir, f)); err == nil {
			t.Errorf("%s was written although Claude Code's start injection works:\n%s", f, b)
		}
	}
	if st := porcelain(t, p.dir); strings.Contains(st, ".carryover") {
		t.Errorf("git sees .carryover/: %q", st)
	}

	// Session 2: a fresh session must start with the handoff in its first request.
	fake2 := NewAnthropic(t, []Turn{{Text: "Resuming: next I will add the retry test."}})
	res = RunClaude(t, ClaudeOpts{Bin: bin, Home: p.home, Dir: p.dir, BaseURL: fake2.URL(), Prompt: "continue"})
	if res.ExitCode != 0 {
		t.Fatalf("session 2: %s", res)
	}
	first := firstMain(t, fake2.MainRequests())
	for _, want := range []string{"[CARRYOVER]", retryTask, "Next I will add the retry test in tests/test_retry.py.", "SessionStart hook additional context"} {
		if !strings.Contains(first, want) {
			t.Errorf("session 2's first request lacks %q", want)
		}
	}
	if strings.Count(first, "# [CARRYOVER] Last updated") != 1 {
		t.Errorf("handoff injected %d times", strings.Count(first, "# [CARRYOVER] Last updated"))
	}
	// "continue" is a nudge: the task survives session 2.
	if h2 := p.handoff(t); !strings.Contains(h2, retryTask) {
		t.Errorf("a nudge replaced the task:\n%s", h2)
	}
}

// TestClaudeResumeAndCompact: `claude -p --resume` drops SessionStart output,
// so the handoff must arrive through the first UserPromptSubmit, once; after
// /compact, SessionStart(compact) re-injects it.
func TestClaudeResumeAndCompact(t *testing.T) { claudeResumeAndCompact(t, "") }

func claudeResumeAndCompact(t *testing.T, bin string) {
	p := newClaudeProject(t)
	fake := NewAnthropic(t, retryScript(p.dir))
	res := RunClaude(t, ClaudeOpts{Bin: bin, Home: p.home, Dir: p.dir, BaseURL: fake.URL(), Prompt: retryTask})
	if res.ExitCode != 0 {
		t.Fatalf("session 1: %s", res)
	}
	sid := sessionIDFromTranscripts(t, p.home)

	fake2 := NewAnthropic(t, []Turn{{Text: "Next I will add the retry test."}, {Text: "Still on it."}})
	res = RunClaude(t, ClaudeOpts{Bin: bin, Home: p.home, Dir: p.dir, BaseURL: fake2.URL(), Prompt: "Now add the retry test file", Args: []string{"--resume", sid}})
	if res.ExitCode != 0 {
		t.Fatalf("resume: %s", res)
	}
	first := firstMain(t, fake2.MainRequests())
	if !strings.Contains(first, "UserPromptSubmit hook additional context") || strings.Count(first, "# [CARRYOVER] Last updated") != 1 {
		t.Errorf("resumed session did not get the handoff exactly once through UserPromptSubmit:\n%.2000s", first)
	}
	// A second prompt in another resumed run must not get it again from the pending flag.
	fake3 := NewAnthropic(t, []Turn{{Text: "ok"}})
	RunClaude(t, ClaudeOpts{Bin: bin, Home: p.home, Dir: p.dir, BaseURL: fake3.URL(), Prompt: "and now?", Args: []string{"--continue"}})
	if m := fake3.MainRequests(); len(m) > 0 {
		seen := map[string]bool{}
		for _, part := range strings.Split(strings.ReplaceAll(string(m[0]), `\n`, "\n"), "# [CARRYOVER] Last updated ")[1:] {
			hdr := strings.SplitN(part, "\n", 2)[0]
			if seen[hdr] {
				t.Errorf("the same handoff (%s) was injected twice into one session", hdr)
			}
			seen[hdr] = true
		}
	}

	// /compact: SessionStart(compact) fires and re-injects.
	fake4 := NewAnthropic(t, nil)
	res = RunClaude(t, ClaudeOpts{Bin: bin, Home: p.home, Dir: p.dir, BaseURL: fake4.URL(), Prompt: "/compact", Args: []string{"--resume", sid}})
	if res.ExitCode != 0 {
		t.Fatalf("/compact: %s", res)
	}
	fake5 := NewAnthropic(t, []Turn{{Text: "Next I will add the retry test."}})
	res = RunClaude(t, ClaudeOpts{Bin: bin, Home: p.home, Dir: p.dir, BaseURL: fake5.URL(), Prompt: "What is next?", Args: []string{"--resume", sid}})
	if res.ExitCode != 0 {
		t.Fatalf("after compact: %s", res)
	}
	after := firstMain(t, fake5.MainRequests())
	if !strings.Contains(after, "SessionStart:compact hook") && !strings.Contains(after, "[CARRYOVER]") {
		t.Errorf("no handoff after compaction:\n%.2000s", after)
	}
	if h := p.handoff(t); !strings.Contains(h, retryTask) && !strings.Contains(h, "retry test") {
		t.Errorf("handoff lost the task after compaction:\n%s", h)
	}
}

func firstMain(t *testing.T, reqs [][]byte) string {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("the fake model received no main request")
	}
	return strings.ReplaceAll(string(reqs[0]), `\n`, "\n")
}

func sessionIDFromTranscripts(t *testing.T, home string) string {
	t.Helper()
	ts := ClaudeTranscripts(home)
	if len(ts) == 0 {
		t.Fatal("no Claude transcript")
	}
	return strings.TrimSuffix(filepath.Base(ts[0]), ".jsonl")
}
