package publish_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
)

// TestRenderCaps fills every section far past the caps: the output stays
// within 50 lines and 4,000 characters and keeps task and next action.
func TestRenderCaps(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	h := distill.Handoff{Tool: "claude", Task: strings.Repeat("Refactor the billing module ", 40), Next: "Next I will run the migration dry-run."}
	for i := 0; i < 40; i++ {
		h.Files = append(h.Files, distill.File{Path: fmt.Sprintf("pkg/mod%02d/file_with_a_long_name_%02d.go", i, i), At: now.Add(-time.Minute)})
		h.Failures = append(h.Failures, distill.Failure{What: fmt.Sprintf("go test ./pkg/mod%02d/... -run TestSomethingLong", i), Error: strings.Repeat("boom ", 30), Count: 2})
		h.Decisions = append(h.Decisions, fmt.Sprintf("We decided to use option %d because it is simpler than the alternatives we looked at.", i))
		h.Questions = append(h.Questions, fmt.Sprintf("Should module %d keep its legacy API?", i))
	}
	for _, mode := range []string{"ask", "brief", "silent", "bogus"} {
		out := publish.Render(h, publish.RenderOptions{Now: now, Mode: mode})
		lines := strings.Count(out, "\n")
		if lines > publish.MaxLines || len(out) > publish.MaxChars {
			t.Fatalf("%s: %d lines, %d chars", mode, lines, len(out))
		}
		for _, must := range []string{"## Task", "Refactor the billing", "## Next action", h.Next, "# RESUME PROTOCOL:"} {
			if !strings.Contains(out, must) {
				t.Errorf("%s: missing %q", mode, must)
			}
		}
		if !strings.HasPrefix(out, "# [CARRYOVER] Last updated 2026-11-21T12:00:00Z from claude\n") {
			t.Errorf("header: %q", strings.SplitN(out, "\n", 2)[0])
		}
	}
}

func TestWrapEnvelopes(t *testing.T) {
	for env, want := range map[adapters.Envelope]string{
		adapters.EnvelopeHookSpecific:        `{"hookSpecificOutput":{"additionalContext":"hi","hookEventName":"SessionStart"}}`,
		adapters.EnvelopeHookSpecificNoEvent: `{"hookSpecificOutput":{"additionalContext":"hi"}}`,
		adapters.EnvelopeFlatCamel:           `{"additionalContext":"hi"}`,
		adapters.EnvelopeFlatSnake:           `{"additional_context":"hi"}`,
	} {
		b, err := adapters.Wrap(env, "SessionStart", "hi")
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s: %s %v", env, b, err)
		}
	}
	if b, _ := adapters.Wrap(adapters.EnvelopeNone, "x", "hi"); b != nil {
		t.Error("none printed something")
	}
}

func TestStaleness(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	text := publish.Header(now.Add(-time.Hour), "codex") + "\n# RESUME PROTOCOL: ask\n## Git\nbranch main @ abc1234; files touched are committed\n"
	if n := publish.Staleness(text, now, "abc1234"); n != "" {
		t.Errorf("fresh handoff flagged: %s", n)
	}
	if n := publish.Staleness(text, now, "def5678"); !strings.Contains(n, "HEAD moved from abc1234 to def5678") {
		t.Errorf("moved HEAD not flagged: %q", n)
	}
	old := publish.Header(now.Add(-72*time.Hour), "codex") + "\n"
	if n := publish.Staleness(old, now, ""); !strings.Contains(n, "3d ago") {
		t.Errorf("old handoff not flagged: %q", n)
	}
}
