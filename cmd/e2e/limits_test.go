package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/publish/limits"
)

// limitTurns: one turn of work (a file written), then the account's limit.
func limitTurns(tool, dir string) []Turn {
	s := story{Word: "limit"}
	t := s.turns(tool, dir)[0]
	t.Text = "I'll create the limit helper first; next I will wire it into the queue."
	return []Turn{t, {RateLimited: true}}
}

const limitTask = "Add a limit helper in limit.py and wire it into the queue"

// resumeOf returns dir's RESUME.md, failing with carryover.log.
func (w *workspace) resumeOf(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".carryover", "RESUME.md"))
	if err != nil {
		t.Fatalf("no RESUME.md: %v\ncarryover.log:\n%s", err, w.log())
	}
	return string(b)
}

func (w *workspace) lastLimits(t *testing.T) []limits.Event {
	t.Helper()
	l, err := ledger.Open(filepath.Join(w.home, ".carryover"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ev, err := limits.LastLimits(l, "")
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestLimitClaudeThenCodex: the real Claude Code hits an HTTP 429
// (rate_limit_error) mid-task; its StopFailure hook writes RESUME.md with
// the task and the last progress, records the limit and tells the user
// (systemMessage); the next session, in Codex, gets the handoff with the
// limit line.
func TestLimitClaudeThenCodex(t *testing.T) {
	w := newWorkspace(t, "claude", "codex")
	dir := w.project(t, "limitq")
	f := NewAnthropic(t, limitTurns("claude", dir))
	res := RunClaude(t, ClaudeOpts{Home: w.home, Dir: dir, BaseURL: f.URL(), Prompt: limitTask,
		Env: []string{"CLAUDE_CODE_MAX_RETRIES=0"}})
	if f.Played() != 1 {
		t.Fatalf("claude played %d turns: %s", f.Played(), res)
	}
	if w.hookRuns()["claude StopFailure"] == 0 {
		t.Errorf("StopFailure did not run; runs %v\n%s", w.hookRuns(), res)
	}
	r := w.resumeOf(t, dir)
	for _, want := range []string{limitTask, "limit.py", "next I will wire it into the queue"} {
		if !strings.Contains(r, want) {
			t.Errorf("RESUME.md lacks %q:\n%s", want, r)
		}
	}
	if !strings.Contains(w.log(), "limit: carryover: rate limit reached. Resume prompt ready: .carryover/RESUME.md") {
		t.Errorf("the user notice was not emitted:\n%s", w.log())
	}
	t.Logf("claude -p output with the limit:\n%s", res)
	if os.Getenv("LIMITS_PEEK") != "" {
		filepath.Walk(filepath.Join(w.home, ".claude", "projects"), func(p string, fi os.FileInfo, err error) error {
			if strings.HasSuffix(p, ".jsonl") {
				b, _ := os.ReadFile(p)
				for _, ln := range strings.Split(string(b), "\n") {
					if strings.Contains(ln, "carryover:") || strings.Contains(ln, "isApiErrorMessage") {
						t.Logf("transcript: %.1500s", ln)
					}
				}
			}
			return nil
		})
	}
	if ev := w.lastLimits(t); len(ev) != 1 || ev[0].Tool != "claude" {
		t.Errorf("ledger limits: %+v", ev)
	}
	// The next session, in Codex.
	next := runAgent(t, "codex", w.home, dir, "continue", []Turn{{Text: "Resuming the limit helper."}}, runOpts{})
	first := next.first(t)
	for _, want := range []string{"[CARRYOVER]", limitTask, "the previous Claude Code session stopped at a rate limit"} {
		if !strings.Contains(first, want) {
			t.Errorf("codex's first request lacks %q:\n%.3000s", want, first)
		}
	}
}

// TestLimitCodexThenClaude: the real Codex reports its plan usage at 95 %
// (x-codex-primary-* headers → token_count rate_limits): RESUME.md is
// written ahead of time and the user told once. The resumed session then
// gets a usage_limit_reached 429: the limit is recorded with its reset
// time, and the next session, in Claude Code, gets the handoff with the
// limit line.
func TestLimitCodexThenClaude(t *testing.T) {
	w := newWorkspace(t, "codex", "claude")
	dir := w.project(t, "limitq")
	turns := limitTurns("codex", dir)[:1]
	turns[0].UsedPercent = 95
	turns = append(turns, Turn{Text: "The helper exists; next I will wire it into the queue.", UsedPercent: 95})
	runAgent(t, "codex", w.home, dir, limitTask, turns, runOpts{})
	r := w.resumeOf(t, dir)
	for _, want := range []string{limitTask, "limit.py", "next I will wire it into the queue"} {
		if !strings.Contains(r, want) {
			t.Errorf("RESUME.md written ahead of time lacks %q:\n%s", want, r)
		}
	}
	if n := strings.Count(w.log(), "limit: carryover: usage limit 95 % used (resets "); n != 1 {
		t.Errorf("the approach was announced %d times, want once:\n%s", n, w.log())
	}
	if ev := w.lastLimits(t); len(ev) != 0 {
		t.Errorf("a warning recorded as a limit: %+v", ev)
	}

	f := NewResponses(t, []Turn{{RateLimited: true}})
	res := RunCodex(t, CodexOpts{Home: w.home, Dir: dir, BaseURL: f.URL(), Prompt: "go on", Args: []string{"resume", "--last"}})
	if !strings.Contains(res.Stdout+res.Stderr, "hit your usage limit") {
		t.Fatalf("codex did not hit the limit: %s", res)
	}
	ev := w.lastLimits(t)
	if len(ev) != 1 || ev[0].Tool != "codex" || ev[0].Limit.ResetsAt.Unix() != RateLimitReset {
		t.Fatalf("ledger limits: %+v\n%s", ev, w.log())
	}
	if !strings.Contains(w.log(), "limit: carryover: usage limit reached (resets ") {
		t.Errorf("the limit was not announced:\n%s", w.log())
	}
	next := runAgent(t, "claude", w.home, dir, "continue", []Turn{{Text: "Resuming the limit helper."}}, runOpts{})
	first := next.first(t)
	for _, want := range []string{"[CARRYOVER]", limitTask, "the previous Codex CLI session stopped at a usage limit (it resets "} {
		if !strings.Contains(first, want) {
			t.Errorf("claude's first request lacks %q:\n%.3000s", want, first)
		}
	}
}

// TestContextWarnTellsClaude: a turn reporting 152,000 input tokens (76 %
// of 200k: WARN) — the next PostToolUse tells the agent once, through its
// additionalContext, which the next model request carries; status shows
// the level of the handoff's session (unit-tested in cmd).
func TestContextWarnTellsClaude(t *testing.T) {
	w := newWorkspace(t, "claude")
	dir := w.project(t, "ctxq")
	write := func(name string, tokens int) Turn {
		return Turn{Text: "Writing " + name + ".", InputTokens: tokens,
			Calls: []Call{{Name: "Write", Args: map[string]any{"file_path": filepath.Join(dir, name), "content": "X = 1\n"}}}}
	}
	turns := []Turn{write("a.py", 152_000), write("b.py", 152_500), write("c.py", 153_000), {Text: "All written; next I will test them."}}
	r := runAgent(t, "claude", w.home, dir, "Write a.py, b.py and c.py", turns, runOpts{})
	note := "context 76 % full — finish the current step; carryover has saved the handoff"
	var told []int
	for i, b := range r.Main {
		if strings.Contains(string(b), note) {
			told = append(told, i)
		}
	}
	// The first PostToolUse may run before Claude Code has flushed the
	// turn's usage line (seen under load): then the second one tells.
	if len(told) == 0 || told[0] < 1 || told[len(told)-1] != len(r.Main)-1 {
		t.Fatalf("the agent was not told after the WARN turn (requests carrying the note: %v of %d)\n%s", told, len(r.Main), w.log())
	}
	if n := strings.Count(w.log(), "(WARN): agent told"); n != 1 {
		t.Errorf("told %d times, want once:\n%s", n, w.log())
	}
}

// TestLimitCopilot: the real Copilot CLI hits a 429 rate_limit_exceeded
// after a turn of work (session.error statusCode 429 in its events). Copilot
// -p flushes its events file after its last hook has run, so the limit is
// read by the next hook in the project (the catch-up) — here Claude Code's
// SessionStart, whose injection then carries the limit line. (RESUME.md is
// written only when a session's own hook sees its limit.)
//
// Not Gemini CLI: with -p, 0.61 ends on the 429 (TerminalQuotaError, "An
// unexpected critical error occurred") without writing it to its transcript
// and without a hook that carries it (only SessionEnd fires), so there is
// nothing to detect; its interactive error lines are fixture-tested
// (testdata/limits/gemini-limit.jsonl). The fake Gemini server answers
// RESOURCE_EXHAUSTED for when a version records it.
func TestLimitCopilot(t *testing.T) {
	w := newWorkspace(t, "copilot-cli", "claude")
	dir := w.project(t, "limitq")
	f := NewChatServer(t, limitTurns("copilot-cli", dir))
	res := RunCopilot(t, CopilotOpts{Home: w.home, Dir: dir, BaseURL: f.URL(), Prompt: limitTask})
	if !strings.Contains(res.Stdout+res.Stderr, "429") {
		t.Fatalf("copilot did not hit the limit: %s", outTail(res))
	}
	next := runAgent(t, "claude", w.home, dir, "continue", []Turn{{Text: "Resuming the limit helper."}}, runOpts{})
	if first := next.first(t); !strings.Contains(first, "the previous GitHub Copilot CLI session stopped at a rate limit") {
		t.Errorf("claude's first request lacks the limit line:\n%.3000s\n%s", first, w.log())
	}
	ev := w.lastLimits(t)
	if len(ev) != 1 || ev[0].Tool != "copilot-cli" {
		t.Errorf("ledger limits: %+v\n%s", ev, w.log())
	}
}
