package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallResumeFlag: --yes --resume writes the mode without asking;
// an unknown mode is refused before anything is written; --yes alone keeps
// the configured mode.
func TestInstallResumeFlag(t *testing.T) {
	f := newInstallFixture(t, fakeAgents)
	cfg := filepath.Join(f.home, ".carryover", "config.toml")
	if code := f.run(t, "install", "--yes", "--resume", "loud"); code != ExitError || !strings.Contains(f.errb.String(), "--resume is one of ask, brief, silent") {
		t.Fatalf("exit %d, stderr %q", code, f.errb)
	}
	if _, err := os.Stat(cfg); err == nil {
		t.Fatal("config written for a refused --resume")
	}
	if code := f.run(t, "install", "--yes", "--resume", "silent"); code != 0 {
		t.Fatalf("exit %d: %s", code, f.errb)
	}
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), `resume = "silent"`) {
		t.Errorf("config.toml:\n%s", b)
	}
	if code := f.run(t, "install", "--yes"); code != 0 {
		t.Fatalf("exit %d: %s", code, f.errb)
	}
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), `resume = "silent"`) {
		t.Errorf("--yes changed the resume mode:\n%s", b)
	}
}
