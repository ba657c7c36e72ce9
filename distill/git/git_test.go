package git_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/distill/git"
)

func run(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestGitFacts(t *testing.T) {
	for _, version := range []string{"2", "3", "4"} {
		t.Run("index-v"+version, func(t *testing.T) {
			dir := t.TempDir()
			run(t, dir, "init", "-q", "-b", "work")
			for _, f := range []string{"a.go", "sub/b.go", "sub/c.go", "d.go"} {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
				os.WriteFile(filepath.Join(dir, f), []byte("package x // "+f+"\n"), 0o644)
			}
			run(t, dir, "add", "-A")
			run(t, dir, "commit", "-qm", "init")
			run(t, dir, "update-index", "--index-version", version)
			// a.go modified (different size), sub/c.go touched but same
			// content, d.go deleted, new.go untracked, sub/b.go clean.
			os.WriteFile(filepath.Join(dir, "a.go"), []byte("package x // changed a lot\n"), 0o644)
			later := time.Now().Add(time.Hour)
			os.Chtimes(filepath.Join(dir, "sub/c.go"), later, later)
			os.Remove(filepath.Join(dir, "d.go"))
			os.WriteFile(filepath.Join(dir, "new.go"), []byte("package x\n"), 0o644)
			files := []string{"a.go", filepath.Join(dir, "sub/b.go"), "sub/c.go", "d.go", "new.go"}
			r := git.Open(dir)
			if r.Branch() != "work" || len(r.Head()) != 7 {
				t.Fatalf("branch %q head %q", r.Branch(), r.Head())
			}
			want := []string{"modified", "clean", "clean", "deleted", "untracked"}
			for i, st := range r.States(files) {
				if st != want[i] {
					t.Errorf("%s: %q, want %q", files[i], st, want[i])
				}
			}
		})
	}
}

func TestGitFactsNoRepo(t *testing.T) {
	if r := git.Open(t.TempDir()); r != nil || r.States([]string{"x"})[0] != "" {
		t.Fatal("not a repo")
	}
}

// TestGitIndexTruncatedWhileMapped: the index is mapped, not copied
// (OpenRepo); one truncated under the mapping (another process rewriting
// it in place) makes the lookups miss instead of crashing the hook with
// SIGBUS.
func TestGitIndexTruncatedWhileMapped(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package x\n"), 0o644)
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-qm", "init")
	r := git.Open(dir)
	if !r.Tracked(filepath.Join(dir, "a.go")) {
		t.Fatal("a.go is tracked")
	}
	if err := os.Truncate(filepath.Join(dir, ".git", "index"), 0); err != nil {
		t.Fatal(err)
	}
	if r.Tracked(filepath.Join(dir, "a.go")) {
		t.Fatal("a truncated index still answered")
	}
	if st := r.States([]string{"a.go"}); st[0] != "untracked" {
		t.Fatalf("a.go after the truncation: %q", st[0])
	}
}
