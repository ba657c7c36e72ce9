package e2e

import (
	"testing"
)

// TestNewestReleases runs the core scenarios against the newest release of
// each agent whose newest differs from the pinned one (Newest), so
// users who upgraded first are covered too. Like every e2e test it installs
// from npm on first use and fails, never skips, when npm cannot reach the
// registry.
func TestNewestReleases(t *testing.T) {
	runs := map[string][]func(*testing.T, string){
		"claude": {claudeEndToEnd, claudeResumeAndCompact},
		"codex":  {codexEndToEnd, codexCompaction},
	}
	// Tools whose newest release has a test of its own (it needs more than
	// a bin, e.g. the install and plugin story), named so the gap check
	// below still catches a tool with neither.
	ownTest := map[string]string{"opencode": "TestOpenCodeNewest"}
	for tool, a := range Newest {
		if a.Version == Pinned[tool].Version {
			continue
		}
		if _, ok := ownTest[tool]; ok {
			continue
		}
		scenarios, ok := runs[tool]
		if !ok {
			t.Errorf("%s %s is listed as newest but no scenario runs it", tool, a.Version)
			continue
		}
		t.Run(tool+"@"+a.Version, func(t *testing.T) {
			bin := InstallAgent(t, a)
			for _, sc := range scenarios {
				sc(t, bin)
			}
		})
	}
}
