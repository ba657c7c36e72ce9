package git_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/carryover/carryover/distill/git"
)

// readAll runs every read the handoff makes (Open, Branch, Head, States,
// Log, CommitsSince, Status, Diff) on another goroutine, each bounded by a
// deadline as the hook's are; a read that blocks fails the test (a generous
// bound, not a speed check).
func readAll(t *testing.T, dir string) *git.Repo {
	t.Helper()
	ch := make(chan *git.Repo, 1)
	go func() {
		r := git.Open(dir)
		dl := time.Now().Add(5 * time.Second)
		_, _ = r.Branch(), r.Head()
		r.States([]string{"a.go", "b.go", "c.go"})
		r.Log(5, dl)
		r.CommitsSince(strings.Repeat("1", 40), dl)
		r.Status(dl)
		r.Diff("a.go", dl)
		ch <- r
	}()
	select {
	case r := <-ch:
		return r
	case <-time.After(time.Minute):
		t.Fatal("reading the repository blocked")
	}
	return nil
}

// TestGitConfigNeverRuns: a cloned repository's .git/config, attributes and
// hooks name programs `git` would run (core.fsmonitor on every status,
// core.hooksPath and hooks/, a diff textconv and external driver, a clean
// filter, gpg.program, an include of /dev/zero); carryover reads .git
// itself and runs none of them, and the include neither blocks nor fails
// the reads.
func TestGitConfigNeverRuns(t *testing.T) {
	dir := hostileRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "evil.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\ncat\n"), 0o755)
	hooks := filepath.Join(dir, ".git", "hooks")
	os.MkdirAll(hooks, 0o755)
	for _, h := range []string{"post-checkout", "pre-commit", "post-index-change", "fsmonitor-watchman", "reference-transaction"} {
		os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\n"+script+"\n"), 0o755)
	}
	cfg := "[core]\n\tfsmonitor = " + script + "\n\thooksPath = " + hooks + "\n\tpager = " + script + "\n\tsshCommand = " + script +
		"\n[include]\n\tpath = /dev/zero\n[includeIf \"gitdir:**\"]\n\tpath = /dev/zero\n" +
		"[diff \"evil\"]\n\ttextconv = " + script + "\n\tcommand = " + script + "\n[diff]\n\texternal = " + script +
		"\n[filter \"evil\"]\n\tclean = " + script + "\n\tsmudge = " + script + "\n\tprocess = " + script +
		"\n[gpg]\n\tprogram = " + script + "\n[log]\n\tshowSignature = true\n"
	f, _ := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(cfg)
	f.Close()
	os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("* diff=evil filter=evil\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644) // a diff to show
	os.WriteFile(filepath.Join(dir, "c.go"), []byte("package c\n"), 0o644)                // untracked
	r := readAll(t, dir)
	if r.Branch() != "main" || r.Head() == "" {
		t.Errorf("branch %q head %q: the hostile config stopped the reads", r.Branch(), r.Head())
	}
	if r.Diff("a.go", time.Now().Add(5*time.Second)) == "" {
		t.Error("no diff of a.go")
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a program named by the repository ran: %s", b)
	}
}

// TestGitHostileStore: an object store and refs built to hang or mislead —
// objects/ a symlink to another repository's, a loose object or a pack a
// FIFO, packed-refs a FIFO or past its bound — fail safe: every read
// returns, nothing is read through the symlink or from the FIFO.
func TestGitHostileStore(t *testing.T) {
	cases := []struct {
		name string
		make func(t *testing.T, dir string)
	}{
		{"objects-symlink-outside", func(t *testing.T, dir string) {
			other := hostileRepo(t)
			objs := filepath.Join(dir, ".git", "objects")
			os.RemoveAll(objs)
			os.Symlink(filepath.Join(other, ".git", "objects"), objs)
		}},
		{"loose-objects-fifo", func(t *testing.T, dir string) {
			filepath.WalkDir(filepath.Join(dir, ".git", "objects"), func(p string, d os.DirEntry, _ error) error {
				if d != nil && !d.IsDir() && len(filepath.Base(filepath.Dir(p))) == 2 {
					os.Remove(p)
					syscall.Mkfifo(p, 0o600)
				}
				return nil
			})
		}},
		{"pack-fifo", func(t *testing.T, dir string) {
			run(t, dir, "gc", "-q")
			ps, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*"))
			for _, p := range ps {
				os.Remove(p)
				syscall.Mkfifo(p, 0o600)
			}
		}},
		{"packed-refs-fifo", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ".git", "refs", "heads", "main"))
			os.Remove(filepath.Join(dir, ".git", "packed-refs"))
			syscall.Mkfifo(filepath.Join(dir, ".git", "packed-refs"), 0o600)
		}},
		{"packed-refs-huge", func(t *testing.T, dir string) {
			run(t, dir, "pack-refs", "--all")
			b, _ := os.ReadFile(filepath.Join(dir, ".git", "packed-refs"))
			line := strings.Repeat("0", 40) + " refs/tags/" + strings.Repeat("x", 200) + "\n"
			huge := strings.Repeat(line, (40<<20)/len(line)) + string(b) // past the 32 MB bound, the real ref last
			os.WriteFile(filepath.Join(dir, ".git", "packed-refs"), []byte(huge), 0o644)
		}},
		{"index-symlink-dev-zero", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ".git", "index"))
			os.Symlink("/dev/zero", filepath.Join(dir, ".git", "index"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := hostileRepo(t)
			os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // changed\n"), 0o644)
			c.make(t, dir)
			r := readAll(t, dir)
			if strings.HasPrefix(c.name, "packed-refs-") && !strings.Contains(r.Problem(), "packed-refs") {
				t.Errorf("Problem() = %q: an unreadable packed-refs should be named as why the head is unknown", r.Problem())
			}
			if c.name == "objects-symlink-outside" {
				if log := r.Log(5, time.Now().Add(5*time.Second)); len(log) > 0 {
					t.Errorf("read commits through objects/ -> another repository: %+v", log)
				}
			}
		})
	}
}
