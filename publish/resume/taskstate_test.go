package resume_test

import (
	"strings"
	"testing"

	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish/resume"
)

// TestSetTaskState: the resume prompt and the structured handoff carry the
// goal, the latest request, set-aside goals, references and the quality
// report, and a fixed failure is not a blocker.
func TestSetTaskState(t *testing.T) {
	one := 1
	h := distill.Handoff{
		Task: "Outline a Q3 investor update", Latest: "What is still unresolved before I send it?",
		SetAside: []string{"Refactor billing"}, Next: "Get the user's answer: Include the bridge round?",
		Refs: []string{"https://example.org/deck"},
		Failures: []distill.Failure{{What: "pytest", Error: "AssertionError: x", ExitCode: &one, Resolved: true},
			{What: "npm run lint", ExitCode: &one, Declined: true}, {What: "make docs", ExitCode: &one, Superseded: true}},
		LastWords: "The deck is drafted.\nShall I add the churn chart?",
		Plan:      []distill.PlanItem{{Text: "Draft highlights", Done: true}, {Text: "Check churn figure"}},
		// What the user asked between the first and latest request, what they refused and what they stopped: the
		// next agent must see all three (a lost request is work never done; a lost refusal is work redone).
		Instructions: []string{"Keep the churn chart from the Q2 deck"},
		Refused:      []string{"the user refused: send-mail investors@example.org (do not redo it without asking)"},
		Interrupted:  "rendering the PDF",
	}
	var s resume.Session
	resume.SetTaskState(&s, h)
	s.DrawnFrom = []string{"copilot-cli session a1", "claude session b2"}
	if len(s.Task.Blockers) != 0 || len(s.Blockers) != 3 || len(s.Task.Stopped) != 2 {
		t.Errorf("a fixed, declined or left-behind failure is a failed approach, not a blocker; a refusal and an interruption are stops: %+v / %+v / %+v", s.Task.Blockers, s.Blockers, s.Task.Stopped)
	}
	res, err := resume.Build(s, resume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Goal:** Outline a Q3 investor update", "**Latest request:** What is still unresolved",
		"Set aside by the user", "Refactor billing", "https://example.org/deck", "Check churn figure",
		"drawn from:** copilot-cli session a1; claude session b2", "**Next action:** Get the user's answer",
		"- Keep the churn chart from the Q2 deck", "- the user refused: send-mail investors@example.org",
		"- the user interrupted: rendering the PDF — ask before resuming it", "`npm run lint` → exit 1 (the user declined it: do not fix or re-run",
		"`make docs` → exit 1 (left behind", "> Shall I add the churn chart?"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("resume prompt lacks %q", want)
		}
	}
	st := resume.Structured(s)
	if st.Goal != h.Task || st.Latest != h.Latest || st.Quality == nil || st.Quality.Of != 8 || len(st.SetAside) != 1 {
		t.Errorf("structured = %+v", st)
	}
	if len(st.Blockers) != 2 || st.Status != "blocked" {
		t.Errorf("a refusal and an interruption block the structured handoff until the user says otherwise: %+v", st.Blockers)
	}
	b, _ := st.Encode("yaml")
	// Every format carries the user's own words and the failures' standing, as handoff.md does.
	for _, want := range []string{"quality:\n  score:", "asked:\n  - Keep the churn chart from the Q2 deck", "the user declined it",
		"left behind", "last_words: |-\n  The deck is drafted."} {
		if !strings.Contains(string(b), want) {
			t.Errorf("yaml lacks %q:\n%s", want, b)
		}
	}
	if back := st.ToSession(); len(back.Task.Asked) != 1 || back.LastWords != h.LastWords {
		t.Errorf("a structured handoff read back loses the user's words or the last words: %+v", back.Task)
	}
}
