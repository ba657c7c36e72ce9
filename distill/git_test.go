package distill_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/distill"
)

func git(t *testing.T, dir string, args ...string) {
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
			git(t, dir, "init", "-q", "-b", "work")
			for _, f := range []string{"a.go", "sub/b.go", "sub/c.go", "d.go"} {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
				os.WriteFile(filepath.Join(dir, f), []byte("package x // "+f+"\n"), 0o644)
			}
			git(t, dir, "add", "-A")
			git(t, dir, "commit", "-qm", "init")
			git(t, dir, "update-index", "--index-version", version)
			// a.go modified (different size), sub/c.go touched but same
			// content, d.go deleted, new.go untracked, sub/b.go clean.
			os.WriteFile(filepath.Join(dir, "a.go"), []byte("package x // changed a lot\n"), 0o644)
			later := time.Now().Add(time.Hour)
			os.Chtimes(filepath.Join(dir, "sub/c.go"), later, later)
			os.Remove(filepath.Join(dir, "d.go"))
			os.WriteFile(filepath.Join(dir, "new.go"), []byte("package x\n"), 0o644)
			files := []distill.File{{Path: "a.go"}, {Path: filepath.Join(dir, "sub/b.go")}, {Path: "sub/c.go"}, {Path: "d.go"}, {Path: "new.go"}}
			g, out := distill.GitFacts(dir, files)
			if !g.Repo || g.Branch != "work" || len(g.Head) != 7 {
				t.Fatalf("git = %+v", g)
			}
			want := []string{"modified", "clean", "clean", "deleted", "untracked"}
			for i, f := range out {
				if f.Git != want[i] {
					t.Errorf("%s: %q, want %q", f.Path, f.Git, want[i])
				}
			}
			if g.Modified != 1 || g.Untracked != 1 || g.Deleted != 1 || g.Clean != 2 {
				t.Errorf("counts = %+v", g)
			}
		})
	}
}

func TestGitFactsNoRepo(t *testing.T) {
	g, _ := distill.GitFacts(t.TempDir(), []distill.File{{Path: "x"}})
	if g.Repo {
		t.Fatal("not a repo")
	}
}

// TestGitIndexTruncatedWhileMapped: the index is mapped, not copied
// (OpenRepo); one truncated under the mapping (another process rewriting
// it in place) makes the lookups miss instead of crashing the hook with
// SIGBUS.
func TestGitIndexTruncatedWhileMapped(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package x\n"), 0o644)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "init")
	r := distill.OpenRepo(dir)
	if !r.Tracked(filepath.Join(dir, "a.go")) {
		t.Fatal("a.go is tracked")
	}
	if err := os.Truncate(filepath.Join(dir, ".git", "index"), 0); err != nil {
		t.Fatal(err)
	}
	if r.Tracked(filepath.Join(dir, "a.go")) {
		t.Fatal("a truncated index still answered")
	}
	if _, files := r.Facts([]distill.File{{Path: "a.go"}}); files[0].Git != "untracked" {
		t.Fatalf("a.go after the truncation: %q", files[0].Git)
	}
}
