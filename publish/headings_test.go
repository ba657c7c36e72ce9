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
	if !strings.Contains(md, `\## Context`) {
		t.Errorf("the quoted heading is gone:\n%s", md)
	}
}
