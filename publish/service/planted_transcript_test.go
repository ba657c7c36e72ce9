package service

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnHookTrackedTranscript: a payload whose transcript_path names a
// file the project's git tracks (it came with the clone) is not read, so
// the planted conversation reaches neither the ledger nor handoff.md; an
// untracked transcript beside it (the held-out case: the same file, not
// added) still is, as a custom store may be anywhere.
func TestOnHookTrackedTranscript(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to build the repository")
	}
	for _, tracked := range []bool{true, false} {
		h := newHookEnv(t)
		planted := filepath.Join(h.project, "notes", "session.jsonl")
		os.MkdirAll(filepath.Dir(planted), 0o755)
		src, _ := os.ReadFile(h.transcript)
		os.WriteFile(planted, src, 0o644)
		args := [][]string{{"init", "-q"}}
		if tracked {
			args = append(args, []string{"add", "notes/session.jsonl"})
		}
		for _, a := range args {
			if out, err := exec.Command("git", append([]string{"-C", h.project}, a...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", a, err, out)
			}
		}
		h.transcript = planted
		_, log := h.hook(t, "Stop")
		_, err := os.Stat(filepath.Join(h.project, ".carryover", "handoff.md"))
		if said := strings.Contains(log, "git tracks it"); said != tracked || (err == nil) == tracked {
			t.Errorf("tracked=%v: handoff written %v, log:\n%s", tracked, err == nil, log)
		}
	}
}
