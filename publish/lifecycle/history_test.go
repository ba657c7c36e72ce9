package lifecycle

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestStaleLinesCountCommits: the staleness line says how many commits
// landed since the handoff's HEAD, on a real repository, and says so
// plainly when that commit is no longer in HEAD's history.
func TestStaleLinesCountCommits(t *testing.T) {
	root := t.TempDir()
	gitIn(t, root, "init", "-q", "-b", "main")
	commit := func(i int) {
		os.WriteFile(filepath.Join(root, "f.txt"), []byte(strings.Repeat("x", i+1)), 0o644)
		gitIn(t, root, "add", "-A")
		gitIn(t, root, "commit", "-qm", "c")
	}
	commit(0)
	at := gitIn(t, root, "rev-parse", "--short=7", "HEAD")
	r := ledger.HandoffRecord{Head: at, Branch: "main", Updated: time.Now()}
	far := time.Now().Add(time.Minute) // what is counted, not how fast
	if got := StaleLines(r, root, distill.OpenRepo(root), far); len(got) != 0 {
		t.Errorf("nothing moved: %v", got)
	}
	for i := 1; i <= 7; i++ {
		commit(i)
	}
	head := gitIn(t, root, "rev-parse", "--short=7", "HEAD")
	got := strings.Join(StaleLines(r, root, distill.OpenRepo(root), far), "\n")
	if want := "> Commits since: 7 commits (HEAD " + at + " → " + head + ") — check `git log`."; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	gitIn(t, root, "checkout", "-q", "--orphan", "redo")
	gitIn(t, root, "commit", "-qm", "rewritten")
	got = strings.Join(StaleLines(r, root, distill.OpenRepo(root), far), "\n")
	if !strings.Contains(got, "Branch switched since: main → redo") || !strings.Contains(got, "HEAD moved since: "+at+" → ") || !strings.Contains(got, "is no longer in its history") {
		t.Errorf("rewritten history:\n%s", got)
	}
	// A deadline already past: the line without the count.
	gitIn(t, root, "checkout", "-q", "main")
	got = strings.Join(StaleLines(r, root, distill.OpenRepo(root), time.Now().Add(-time.Second)), "\n")
	if want := "> Commits since: HEAD " + at + " → " + head + " — check `git log`."; got != want {
		t.Errorf("out of time: %q, want %q", got, want)
	}
}
