package publish

import (
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/distill"
)

// TestRenderQuotedHeadings: a heading inside the task (a prompt that quotes
// markdown) is escaped, so handoff.md keeps its own sections only.
func TestRenderQuotedHeadings(t *testing.T) {
	md := Render(distill.Handoff{Tool: "claude", Task: "Fix the login bug\n## Context\nIt fails on Safari", Next: "run the tests"},
		RenderOptions{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "## Context") {
			t.Errorf("a quoted heading became a section:\n%s", md)
		}
	}
	// The goal is one line (issue 13: goal, latest request and next action
	// within the first 1,000 characters): the quoted heading stays inline.
	if !strings.Contains(md, "Fix the login bug ## Context It fails on Safari") {
		t.Errorf("the quoted heading is gone:\n%s", md)
	}
}
