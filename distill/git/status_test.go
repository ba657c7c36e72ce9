package git_test

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/distill/git"
)

// TestManualPathMatchesGit: what the manual path shows without running
// git — the tracked files changed in the work tree, the recent commits, a
// file's diff against the index — matches what `git diff --name-status`,
// `git log` and `git diff` say of the same repository (git runs here only
// as the oracle).
func TestManualPathMatchesGit(t *testing.T) {
	dir := hostileRepo(t) // a.go, b.go committed on main
	for _, f := range []string{"c.go", "sub/d.go", "sub/e.go", "f.go"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		os.WriteFile(filepath.Join(dir, f), []byte("package x\n\n// "+f+"\nfunc F() {}\n"), 0o644)
	}
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-qm", "second\n\nwith a body")
	time.Sleep(1100 * time.Millisecond) // committer times one second apart
	os.WriteFile(filepath.Join(dir, "b.go"), []byte("package b\n\nvar B = 1\n"), 0o644)
	run(t, dir, "commit", "-qam", "third")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc A() int { return 1 }\n"), 0o644) // unstaged change
	os.WriteFile(filepath.Join(dir, "c.go"), []byte("package x\n\n// staged\n"), 0o644)
	run(t, dir, "add", "c.go") // staged change
	os.WriteFile(filepath.Join(dir, "c.go"), []byte("package x\n\n// staged, then changed again\n"), 0o644)
	os.Remove(filepath.Join(dir, "sub/d.go")) // deleted in the work tree
	run(t, dir, "rm", "-q", "sub/e.go")       // deleted in the index
	os.WriteFile(filepath.Join(dir, "new.go"), []byte("package x\n"), 0o644)
	run(t, dir, "add", "new.go") // added
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "f.go"), later, later) // touched, same content
	os.WriteFile(filepath.Join(dir, "untracked.go"), []byte("package x\n"), 0o644)

	r := git.Open(dir)
	lines, ok := r.Status(time.Now().Add(time.Minute))
	var got []string
	for _, l := range lines {
		got = append(got, strings.TrimSpace(l[:2])+"\t"+l[3:])
	}
	if want := gitOut(t, dir, "diff", "--name-status"); !ok || strings.Join(got, "\n") != want {
		t.Errorf("Status (ok %v):\n%s\nwant (git diff --name-status):\n%s", ok, strings.Join(lines, "\n"), want)
	}

	got = nil
	for _, c := range r.Log(10, time.Now().Add(time.Minute)) {
		first, _, _ := strings.Cut(c.Message, "\n")
		got = append(got, c.ID+" "+first)
	}
	if want := gitOut(t, dir, "log", "-10", "--format=%h %s", "--abbrev=7"); strings.Join(got, "\n") != want {
		t.Errorf("Log:\n%s\nwant (git log):\n%s", strings.Join(got, "\n"), want)
	}

	for _, f := range []string{"a.go", "c.go", "sub/d.go", "f.go"} {
		d := r.Diff(f, time.Now().Add(time.Minute))
		if changes(d) != changes(gitOut(t, dir, "diff", "--no-ext-diff", "--no-color", "--", f)) {
			t.Errorf("Diff(%s):\n%s\nwant the changes of git diff:\n%s", f, d, gitOut(t, dir, "diff", "--", f))
		}
	}
	if d := r.Diff("f.go", time.Now().Add(time.Minute)); d != "" {
		t.Errorf("a touched, unchanged file has a diff: %q", d)
	}
}

// changes is a unified diff's added and removed lines (hunk headers and
// the index line differ in form between encoders).
func changes(d string) string {
	var out []string
	for _, l := range strings.Split(d, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
			out = append(out, l)
		}
	}
	return fmt.Sprint(out)
}

// TestManualPathHostile: the manual path's reads over a crafted index —
// entries that climb out of the work tree or pass through a symlinked
// directory — never read a file outside it, and a store of garbage gives
// no diff and no log rather than wrong ones.
func TestManualPathHostile(t *testing.T) {
	dir := hostileRepo(t)
	outside := filepath.Join(filepath.Dir(dir), "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("package a\n"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "link"))
	// An index naming link/secret.txt (git refuses to add through a
	// symlink, so the entry is written by update-index --cacheinfo).
	blob := gitOut(t, dir, "hash-object", "-w", "a.go")
	run(t, dir, "update-index", "--add", "--cacheinfo", "100644,"+blob+",link/secret.txt")
	r := git.Open(dir)
	lines, ok := r.Status(time.Now().Add(time.Minute))
	if !ok || !strings.Contains(strings.Join(lines, "\n"), " D link/secret.txt") {
		t.Errorf("an entry through a symlinked directory: %q (ok %v), want it shown deleted, not read", lines, ok)
	}
	for _, p := range []string{"../outside/secret.txt", "link/secret.txt"} {
		if d := r.Diff(p, time.Now().Add(time.Minute)); d != "" {
			t.Errorf("diffed a file outside the work tree: %q", d)
		}
	}
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // changed\n"), 0o644)
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "*", "*"))
	for _, p := range packs {
		os.Chmod(p, 0o644)
		os.WriteFile(p, []byte("garbage"), 0o644)
	}
	r = git.Open(dir)
	if d, log := r.Diff("a.go", time.Now().Add(time.Minute)), r.Log(3, time.Now().Add(time.Minute)); d != "" || log != nil {
		t.Errorf("a store of garbage gave a diff or a log: %q %v", d, log)
	}
}

// TestDiffApplies: the hunks Diff writes, under a file header, are a
// patch git itself applies —
// random edits (lines changed, added, removed, a missing last newline)
// applied in reverse to the work tree give HEAD's file back.
func TestDiffApplies(t *testing.T) {
	dir := hostileRepo(t)
	rnd := rand.New(rand.NewSource(3))
	var base []string
	for i := 0; i < 60; i++ {
		base = append(base, fmt.Sprintf("line %d", i))
	}
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte(strings.Join(base, "\n")+"\n"), 0o644)
	run(t, dir, "add", "f.txt")
	run(t, dir, "commit", "-qm", "f")
	for trial := 0; trial < 40; trial++ {
		cur := append([]string(nil), base...)
		for k := 0; k < 1+rnd.Intn(6); k++ {
			i := rnd.Intn(len(cur))
			switch rnd.Intn(3) {
			case 0:
				cur[i] = "changed " + cur[i]
			case 1:
				cur = append(cur[:i], cur[i+1:]...)
			default:
				cur = append(cur[:i], append([]string{"new"}, cur[i:]...)...)
			}
		}
		text := strings.Join(cur, "\n")
		if rnd.Intn(4) > 0 {
			text += "\n"
		}
		os.WriteFile(filepath.Join(dir, "f.txt"), []byte(text), 0o644)
		d := "--- a/f.txt\n+++ b/f.txt\n" + git.Open(dir).Diff("f.txt", time.Now().Add(time.Minute))
		cmd := exec.Command("git", "apply", "-R", "--check", "-")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("trial %d: git apply -R: %v\n%s\ndiff:\n%s", trial, err, out, d)
		}
	}
}
