package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopilotEndToEnd drives the real Copilot CLI (-p, BYOK) through the
// story. Copilot writes events.jsonl behind its hooks; session 1's stop and
// end hooks wait for it (TestCopilotHandoffAtSessionEnd), and whatever they
// miss is captured at the next session's sessionStart and reaches that
// session's first model request.
func TestCopilotEndToEnd(t *testing.T) {
	w := newWorkspace(t, "copilot-cli")
	dir := w.project(t, "chunklib")
	s := story{Word: "chunker"}
	runAgent(t, "copilot-cli", w.home, dir, s.Task(), s.turns("copilot-cli", dir), runOpts{})
	s.checkFiles(t, dir)
	runs := w.hookRuns()
	for _, ev := range []string{"sessionStart", "userPromptSubmitted", "postToolUse", "agentStop", "sessionEnd"} {
		if runs["copilot-cli "+ev] == 0 {
			t.Errorf("carryover's %s hook did not run; ran: %v", ev, runs)
		}
	}
	ss := w.sessions(t, dir, "copilot-cli")
	if len(ss) != 1 {
		t.Fatalf("ledger sessions for copilot-cli in %s: %+v\ncarryover.log:\n%s", dir, ss, w.log())
	}
	sid := ss[0].NativeID
	events := CopilotEventsPath(filepath.Join(w.home, ".copilot"), sid)
	if _, err := os.Stat(events); err != nil {
		t.Fatalf("the ledger's session %s has no events.jsonl: %v", sid, err)
	}
	// Session 1's own hooks normally see its final turn (they wait for
	// Copilot's writer); a wait that timed out leaves it to session 2.
	b, err := os.ReadFile(filepath.Join(dir, ".carryover", "handoff.md"))
	early := err == nil && strings.Contains(string(b), s.Next())
	if !early {
		t.Logf("note: session 1's own hooks did not see its final turn (handoff present: %v); session 2 catches it up", err == nil)
	}

	// Session 2: its sessionStart catches session 1 up and injects it.
	r := runAgent(t, "copilot-cli", w.home, dir, "continue", []Turn{{Text: "Resuming. " + s.Next()}}, runOpts{})
	first := r.first(t)
	checkDelivered(t, first, s, "copilot-cli")
	for _, want := range []string{storyDecision, storyFailCmd} {
		if !strings.Contains(first, want) {
			t.Errorf("the injected handoff lacks %q", want)
		}
	}
	// Session 2's own events.jsonl does not exist yet at its sessionStart:
	// the rows it added are session 1's, caught up.
	if ln := w.lastRun("copilot-cli", "sessionStart"); !early && rowsAdded(ln) <= 0 {
		t.Errorf("session 2's sessionStart did not catch session 1 up: %q", ln)
	}
	h := w.handoff(t, dir)
	s.checkHandoff(t, h, "copilot-cli")
	if !contextRE.MatchString(h) {
		t.Errorf("handoff lacks Copilot's usage figures (context: N/M tokens (P%% full)):\n%s", h)
	}
	ss = w.sessions(t, dir, "copilot-cli")
	for _, x := range ss {
		if x.NativeID == sid && x.Rows == 0 {
			t.Errorf("session 1 (%s) has no ledger rows after the catch-up", sid)
		}
	}
}

// TestCopilotHandoffAtSessionEnd: a Copilot-only session's handoff is right
// the moment `copilot -p` exits, with no later session to catch it up. The
// session's own agentStop and sessionEnd hooks wait for Copilot to write
// the turn that ended (copilot.go): the handoff holds the prompt, the
// failure it then fixed as fixed and its stated next step. A Claude
// session that follows receives exactly that.
func TestCopilotHandoffAtSessionEnd(t *testing.T) {
	w := newWorkspace(t, "copilot-cli", "claude")
	dir := w.project(t, "slugkit")
	const (
		prompt = "Add a slugify helper in slug.py with a unittest in test_slug.py, and make the tests pass"
		test   = "python3 -m unittest test_slug"
		next   = "Next I will use slugify for the --title option of the export command."
	)
	slug := filepath.Join(dir, "slug.py")
	tst := filepath.Join(dir, "test_slug.py")
	turns := []Turn{
		{Text: "Running the tests first.", Calls: []Call{{Name: "bash", Args: map[string]any{"command": test, "description": "Run the slug tests"}}}},
		{Text: "test_slug.py does not exist yet; writing it and the helper.", Calls: []Call{
			{Name: "create", Args: map[string]any{"path": slug, "file_text": "import re\n\ndef slugify(s):\n    return re.sub(r'[^a-z0-9]+', '-', s.lower()).strip('-')\n"}},
			{Name: "create", Args: map[string]any{"path": tst, "file_text": "import unittest\nfrom slug import slugify\n\nclass T(unittest.TestCase):\n    def test_basic(self):\n        self.assertEqual(slugify('Hello, World'), 'hello-world')\n"}},
		}},
		{Calls: []Call{{Name: "bash", Args: map[string]any{"command": test, "description": "Run the slug tests again"}}}},
		{Text: "The slug tests pass now. " + next},
	}
	runAgent(t, "copilot-cli", w.home, dir, prompt, turns, runOpts{})

	// Checked the moment Copilot exits: no other session has run.
	h := w.handoff(t, dir)
	if testing.Verbose() {
		t.Logf("handoff at Copilot's exit:\n%s", h)
	}
	for _, want := range []string{" from copilot-cli · HO-", prompt, next, "slug.py"} {
		if !strings.Contains(h, want) {
			t.Errorf("the handoff written when the Copilot session ended lacks %q:\n%s\ncarryover.log:\n%s", want, h, w.log())
		}
	}
	checkFixedNotFailing(t, h, test)
	if ln := w.lastRun("copilot-cli", "sessionEnd"); !strings.Contains(ln, "flushwait=") {
		t.Errorf("sessionEnd did not wait for Copilot's transcript: %q", ln)
	}
	if strings.Contains(w.log(), "had not written this hook's events") {
		t.Logf("note: a hook gave up waiting for Copilot's transcript (a loaded machine); the handoff was still checked above")
	}

	// A Claude session that follows is handed Copilot's state.
	r := runAgent(t, "claude", w.home, dir, "continue", []Turn{{Text: "Resuming from the handoff."}}, runOpts{})
	first := r.first(t)
	for _, want := range []string{"[CARRYOVER]", "Z from copilot-cli", prompt, next} {
		if !strings.Contains(first, want) {
			t.Errorf("Claude's first model request lacks %q:\n%.4000s", want, first)
		}
	}
	checkFixedNotFailing(t, first, test)
}

// checkFixedNotFailing fails when text presents cmd, which failed and then
// passed, as still failing: every line naming it must say it later passed.
func checkFixedNotFailing(t *testing.T, text, cmd string) {
	t.Helper()
	for _, ln := range strings.Split(text, "\n") {
		if !strings.Contains(ln, cmd) {
			continue
		}
		low := strings.ToLower(ln)
		if strings.Contains(low, "still") || (strings.Contains(low, "exit") || strings.Contains(low, "fail")) &&
			!strings.Contains(low, "succeeded") && !strings.Contains(low, "fixed") && !strings.Contains(low, "passed") {
			t.Errorf("%q failed and then passed, but this line presents it as failing: %q", cmd, ln)
		}
	}
}
