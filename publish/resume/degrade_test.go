package resume

import (
	"strings"
	"testing"

	"github.com/carryover/carryover/publish"
)

// TestDegrade: a session without a request still yields a valid handoff
// whose goal is the best available line, and says so in warnings.
func TestDegrade(t *testing.T) {
	cases := []struct {
		name string
		s    Session
		goal string
	}{
		{"last assistant reply", Session{Conversation: Conversation{Messages: []Message{
			{Role: "tool", ToolName: "Grep", Content: "a.go:1"}, {Role: "assistant", Content: "Found the cause.\nDetails…"}}}},
			"continue from the last reply: Found the cause. Details…"},
		{"a completed step", Session{Task: Task{Completed: []string{"edited a.go"}}}, "continue after: edited a.go"},
		{"nothing at all", Session{}, publish.NoGoal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := Structured(c.s)
			h.Version, h.Date = Version, "2026-01-01"
			Degrade(&h, c.s)
			if h.Goal != c.goal {
				t.Errorf("goal = %q; want %q", h.Goal, c.goal)
			}
			if len(h.Warnings) == 0 || h.Warnings[0] != NoRequestWarning || !strings.HasPrefix(h.Now, "confirm the task") {
				t.Errorf("warnings %q, now %q", h.Warnings, h.Now)
			}
			if err := h.Validate(); err != nil {
				t.Errorf("degraded handoff invalid: %v", err)
			}
			for _, f := range []string{"yaml", "json"} {
				if _, err := h.Encode(f); err != nil {
					t.Errorf("encode %s: %v", f, err)
				}
			}
		})
	}
	// A session with its request is left alone.
	h := Handoff{Goal: "fix it", Now: "run the tests"}
	Degrade(&h, Session{})
	if h.Goal != "fix it" || len(h.Warnings) != 0 {
		t.Errorf("a complete handoff was changed: %+v", h)
	}
}
