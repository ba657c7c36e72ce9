package resume

import (
	"fmt"
	"strings"

	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

// SetTaskState fills s's task state — goal, latest request, set-aside
// goals, next action, plan, completed steps, open questions, failures,
// decisions, references, the test command and the quality report — from a
// distilled handoff. The manual path calls it with one session's handoff
// (--session) or the project's fold across sessions and agents (the fold
// handoff.md comes from), so both paths say the same thing.
func SetTaskState(s *Session, h distill.Handoff) {
	s.Task = Task{Description: h.Task, Latest: h.Latest, SetAside: append([]string(nil), h.SetAside...), InProgress: h.Next}
	s.Task.Completed = distill.Dedupe(h.Done)
	s.Decisions = append([]string(nil), h.Decisions...)
	s.References = append(append([]string(nil), h.Refs...), h.Actions...)
	s.Test = h.Test
	for _, p := range h.Plan {
		if p.Done {
			s.Task.Completed = append(s.Task.Completed, p.Text)
		} else if p.Text != h.Next {
			s.Task.Remaining = append(s.Task.Remaining, p.Text)
		}
	}
	s.Questions = nil
	for _, q := range h.Questions {
		switch {
		case strings.HasPrefix(q, "unresolved: "):
			// the failure itself is listed below
		case todoMarker(q):
			s.Task.Remaining = append(s.Task.Remaining, q)
		default:
			s.Questions = append(s.Questions, q)
		}
	}
	s.Blockers = nil
	for _, f := range h.Failures {
		b := blocker(f)
		s.Blockers = append(s.Blockers, b)
		if !f.Resolved {
			s.Task.Blockers = append(s.Task.Blockers, b)
		}
	}
	q := h.Quality()
	s.Quality = &q
}

// todoMarker reports a to-do an edit added (TODO:, FIXME:, XXX:, HACK:).
func todoMarker(q string) bool {
	for _, m := range []string{"TODO:", "FIXME:", "XXX:", "HACK:"} {
		if strings.HasPrefix(q, m) {
			return true
		}
	}
	return false
}

// blocker is one failure as a line: what failed, how, its error, count,
// earlier errors and cause, and whether it later succeeded.
func blocker(f distill.Failure) string {
	b := "`" + f.What + "`"
	if f.ExitCode != nil {
		b += fmt.Sprintf(" → exit %d", *f.ExitCode)
	} else {
		b += " → failed"
	}
	if f.Error != "" {
		b += ": " + f.Error
	}
	if f.Count > 1 {
		b += fmt.Sprintf(" (×%d)", f.Count)
	}
	if earlier := publish.EarlierErrors(f); len(earlier) > 0 {
		b += "; earlier: " + strings.Join(earlier, "; ")
	}
	if f.Cause != "" {
		b += " — cause: " + f.Cause
	}
	if f.Resolved {
		b += " (later succeeded)"
	}
	return b
}
