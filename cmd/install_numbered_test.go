package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallNumberedRemovesUnticked: without raw mode the numbered lists ask the same questions as the picker: an
// agent unticked while its hooks are installed is offered their removal, a wrong answer is asked again, and the resume
// mode is picked by name.
func TestInstallNumberedRemovesUnticked(t *testing.T) {
	f := newInstallFixture(t, fakeAgents)
	if code := f.run(t, "install", "--yes", "--tools", "claude"); code != 0 {
		t.Fatalf("exit %d: %s", code, f.errb)
	}
	settings := filepath.Join(f.home, ".claude", "settings.json")
	if b, _ := os.ReadFile(settings); !strings.Contains(string(b), installExe) {
		t.Fatalf("no stubs installed:\n%s", b)
	}
	f.env.StdinTTY, f.env.StdoutTTY = true, true
	f.env.Stdin = strings.NewReader("1\n\nnope\nremove them\nBrief\n")
	if code := f.run(t, "install"); code != 0 {
		t.Fatalf("exit %d: %s", code, f.errb)
	}
	out := f.out.String()
	for _, want := range []string{
		"Claude Code is unticked; its carryover hooks in " + settings + " stay unless removed: keep them or remove them? [keep them]: ",
		`"nope" is not one of keep them, remove them`,
		"When a new session starts with a handoff: ask, brief or silent? [ask]: ",
		`resume = "brief" saved`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(settings); strings.Contains(string(b), installExe) {
		t.Errorf("claude's stubs stayed although their removal was chosen:\n%s", b)
	}
}
