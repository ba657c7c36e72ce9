package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeminiEndToEnd drives the real Gemini CLI headless through the story,
// checks the handoff (the failure is only visible as "Exit Code: 2" in the
// shell output), that a fresh session's first request carries it, and that
// `--resume latest` gets it exactly once (the CLI's resume rewrite drops the
// earlier <hook_context> prompt).
func TestGeminiEndToEnd(t *testing.T) {
	w := newWorkspace(t, "gemini")
	dir := w.project(t, "backofflib")
	s := story{Word: "backoff"}
	runAgent(t, "gemini", w.home, dir, s.Task(), s.turns("gemini", dir), runOpts{})
	s.checkFiles(t, dir)
	runs := w.hookRuns()
	for _, ev := range []string{"SessionStart", "AfterAgent", "SessionEnd"} {
		if runs["gemini "+ev] == 0 {
			t.Errorf("carryover's %s hook did not run; ran: %v", ev, runs)
		}
	}
	h := w.handoff(t, dir)
	s.checkHandoff(t, h, "gemini")
	if !contextRE.MatchString(h) {
		t.Errorf("handoff lacks the Gemini usage figures (context: N/M tokens (P%% full)):\n%s", h)
	}
	// Gemini CLI's start injection works: no pointer block, no GEMINI.md (issue 24).
	for _, f := range []string{"AGENTS.md", "GEMINI.md", ".gitignore"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was written although Gemini CLI's start injection works:\n%s", f, b)
		}
	}

	// Session 2: a fresh session gets it through SessionStart.
	r := runAgent(t, "gemini", w.home, dir, "continue", []Turn{{Text: "Resuming. " + s.Next()}}, runOpts{})
	first := r.first(t)
	checkDelivered(t, first, s, "gemini")
	if !strings.Contains(first, "<hook_context>") {
		t.Errorf("the handoff did not arrive as Gemini's <hook_context>:\n%.2000s", first)
	}

	// Session 3: resume the latest session; the handoff arrives once.
	r = runAgent(t, "gemini", w.home, dir, "What is left to do?", []Turn{{Text: "Still: " + s.Next()}}, runOpts{Args: []string{"--resume", "latest"}})
	first = r.first(t)
	if n := handoffCount(first); n != 1 {
		t.Errorf("the resumed session's first request carries %d handoffs, want exactly 1:\n%.3000s", n, first)
	}
	for _, want := range []string{s.Task(), s.Next(), storyFailCmd} {
		if !strings.Contains(first, want) {
			t.Errorf("the resumed session's first request lacks %q", want)
		}
	}
	// Session 3 resumed session 2: it appends to its file, or, in a later
	// minute, may start a new file for the same session.
	if ts := GeminiTranscripts(w.home); len(ts) != 2 && len(ts) != 3 {
		t.Errorf("want 2 Gemini session files (3 if the resume started a new one), got %v", ts)
	}
}
