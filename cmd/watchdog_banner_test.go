package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/publish/service"
)

// TestWatchdogFallbackBanner: when the watchdog gives up on a session
// start, the verified handoff it injects carries the same banner as the
// normal path (id, agent, age, goal, next), from handoff.md's own header,
// without the ledger.
func TestWatchdogFallbackBanner(t *testing.T) {
	le := newLifecycleEnv(t)
	src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(t.TempDir(), "s1.jsonl")
	os.WriteFile(tr, src, 0o600)
	le.snap("claude", "Stop", map[string]any{"session_id": "4fbd56c9-cd10-4412-a9cc-58af839aaddf", "transcript_path": tr})
	const id = "HO-20261121-120000-4fbd56c9"
	le.now = le.now.Add(5 * time.Minute)
	want := "carryover · " + filepath.Base(le.project) + " · handoff " + id + " from claude 5m ago · Resuming: Add a retry helper"

	for _, tc := range []struct{ tool, event, shape string }{
		{"codex", "SessionStart", want},                        // first line of the injection
		{"claude", "SessionStart", `"systemMessage":"` + want}, // shown to the user
	} {
		agent, _ := adapters.ByName(tc.tool)
		fb := &service.Fallback{}
		fb.Set(agent, service.Open(le.e.service(), le.project, nil).Project)
		le.out.Reset()
		le.out.Write(fb.Inject(tc.event, newLogger(le.e)))
		got := le.out.String()
		if !strings.Contains(got, tc.shape) || !strings.Contains(got, "## Next action") {
			t.Errorf("%s watchdog fallback lacks the banner %q:\n%s", tc.tool, tc.shape, got)
		}
	}
}
