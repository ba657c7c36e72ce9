package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodexEndToEnd drives the real `codex exec` with carryover's trusted
// hooks through the story, checks the handoff, proves the hooks really ran
// (a silently skipped hook would leave no log line and no ledger rows), and
// that the next session's first model request carries the handoff.
func TestCodexEndToEnd(t *testing.T) { codexEndToEnd(t, "") }

// codexEndToEnd is TestCodexEndToEnd against the codex executable bin (the
// pinned one when empty).
func codexEndToEnd(t *testing.T, bin string) {
	w := newWorkspace(t, "codex")
	dir := w.project(t, "retrylib")
	s := story{Word: "retry"}
	runAgent(t, "codex", w.home, dir, s.Task(), s.turns("codex", dir), runOpts{Bin: bin})
	s.checkFiles(t, dir)

	runs := w.hookRuns()
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"} {
		if runs["codex "+ev] == 0 {
			t.Errorf("carryover's %s hook did not run in codex exec; ran: %v", ev, runs)
		}
	}
	ss := w.sessions(t, dir, "codex")
	if len(ss) != 1 || ss[0].Rows == 0 || ss[0].Transcript == "" {
		t.Fatalf("ledger sessions for codex in %s: %+v\ncarryover.log:\n%s", dir, ss, w.log())
	}
	if rs := CodexRollouts(w.home); len(rs) != 1 || !strings.Contains(rs[0], ss[0].NativeID) {
		t.Errorf("the ledger session %s is not the rollout %v", ss[0].NativeID, rs)
	}

	h := w.handoff(t, dir)
	s.checkHandoff(t, h, "codex")
	if !contextRE.MatchString(h) || !strings.Contains(h, "/258,400 tokens") {
		t.Errorf("handoff lacks Codex's token_count figures (context: N/258,400 tokens (P%% full)):\n%s", h)
	}
	// Codex's start injection works: no pointer block, no CLAUDE.md (issue 24).
	for _, f := range []string{"AGENTS.md", "CLAUDE.md", ".gitignore"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was written although Codex's start injection works:\n%s", f, b)
		}
	}

	// Session 2: a fresh `codex exec` gets the handoff in its first request.
	r := runAgent(t, "codex", w.home, dir, "continue", []Turn{{Text: "Resuming. " + s.Next()}}, runOpts{Bin: bin})
	first := r.first(t)
	checkDelivered(t, first, s, "codex")
	if !strings.Contains(first, storyDecision) {
		t.Errorf("the injected handoff lacks the decision")
	}
	if h2 := w.handoff(t, dir); !strings.Contains(h2, s.Task()) {
		t.Errorf("the nudge %q replaced the task:\n%s", "continue", h2)
	}
	// Session 2's transcript shows the injection arrived (a receipt): still no block.
	if b, err := os.ReadFile(filepath.Join(dir, "AGENTS.md")); err == nil {
		t.Errorf("AGENTS.md written after a delivered injection:\n%s\n%s", b, w.log())
	}
}

// TestCodexCompaction: Codex compacts mid-turn (model_auto_compact_token_limit
// and a response reporting more input tokens), the original injection is
// dropped from the replacement history, and SessionStart(source compact)
// puts the handoff back exactly once into the post-compaction request.
func TestCodexCompaction(t *testing.T) { codexCompaction(t, "") }

func codexCompaction(t *testing.T, bin string) {
	w := newWorkspace(t, "codex")
	dir := w.project(t, "throttlelib")
	s := story{Word: "throttle"}
	runAgent(t, "codex", w.home, dir, s.Task(), s.turns("codex", dir), runOpts{Bin: bin})
	before := w.hookRuns()["codex SessionStart"]

	r := runAgent(t, "codex", w.home, dir, "Run the two release steps", []Turn{
		{Calls: []Call{{Name: "shell", Args: map[string]any{"command": "echo step-one"}}}, InputTokens: 9000},
		{Calls: []Call{{Name: "shell", Args: map[string]any{"command": "echo step-two"}}}, InputTokens: 30000},
		{Text: "Both steps ran. " + s.Next(), InputTokens: 3000},
	}, runOpts{Bin: bin, Config: []string{"model_auto_compact_token_limit=20000"}})
	if r.Compacts != 1 {
		t.Fatalf("codex compacted %d times, want 1: %s", r.Compacts, r.Output)
	}
	if n := handoffCount(r.first(t)); n != 1 {
		t.Errorf("the session's first request carries %d handoffs, want 1", n)
	}
	var post string
	compacted := false
	for _, q := range r.All {
		switch {
		case q.Kind == KindCompact:
			compacted = true
		case compacted && q.Kind == KindMain && post == "":
			post = strings.ReplaceAll(string(q.Body), `\n`, "\n")
		}
	}
	if post == "" {
		t.Fatalf("no main request after the compaction: %s", r.Output)
	}
	if n := handoffCount(post); n != 1 {
		t.Errorf("the post-compaction request carries %d handoffs, want exactly 1:\n%.3000s", n, post)
	}
	// The decision and the next step are only in the handoff (the fake's
	// compaction summary holds neither).
	for _, want := range []string{storyDecision, s.Next(), storyFailCmd} {
		if !strings.Contains(post, want) {
			t.Errorf("the post-compaction request lacks %q", want)
		}
	}
	if got := w.hookRuns()["codex SessionStart"] - before; got != 2 {
		t.Errorf("SessionStart ran %d times in the compacting session, want 2 (startup, compact)", got)
	}
	if w.hookRuns()["codex PreCompact"] == 0 {
		t.Errorf("carryover's PreCompact hook did not run")
	}
	// The compacting session's own prompt is the task now; what session 1
	// left is still there.
	h := w.handoff(t, dir)
	for _, want := range []string{"Run the two release steps", s.File(), storyFailCmd, s.Next()} {
		if !strings.Contains(h, want) {
			t.Errorf("handoff after compaction lacks %q:\n%s", want, h)
		}
	}
}
