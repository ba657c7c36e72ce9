package git_test

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/carryover/carryover/distill/git"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func commitN(t *testing.T, dir string, n int, tag string) {
	t.Helper()
	for i := 0; i < n; i++ {
		os.WriteFile(filepath.Join(dir, tag+".txt"), []byte(fmt.Sprintf("%s %d\n%s", tag, i, strings.Repeat("line of text\n", 40))), 0o644)
		run(t, dir, "add", "-A")
		run(t, dir, "commit", "-qm", fmt.Sprintf("%s %d", tag, i))
	}
}

// since counts with a deadline far away: these tests are about what is
// counted, never how fast.
func since(dir, old string) git.CommitCount {
	return git.Open(dir).CommitsSince(old, time.Now().Add(time.Minute))
}

// TestCommitsSince: the count matches `git rev-list --count old..HEAD` on
// a real repository — loose objects, then packed with deltas (git gc), a
// merge of a branch that forked before the handoff, a history rewritten
// so the handoff's commit is gone, and HEAD not moved.
func TestCommitsSince(t *testing.T) {
	dir := hostileRepo(t)
	old := gitOut(t, dir, "rev-parse", "--short=7", "HEAD")
	if c := since(dir, old); !c.Known || c.N != 0 || c.String() != "0 commits" {
		t.Errorf("HEAD not moved: %+v", c)
	}
	commitN(t, dir, 12, "work")
	if c := since(dir, old); !c.Known || c.More || c.N != 12 || c.String() != "12 commits" {
		t.Fatalf("loose objects: %+v, want 12", c)
	}
	run(t, dir, "gc", "-q", "--aggressive")
	if ls, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack")); len(ls) == 0 {
		t.Fatal("git gc made no pack: the packed case proves nothing")
	}
	if c := since(dir, old); !c.Known || c.N != 12 {
		t.Fatalf("packed with deltas: %+v, want 12", c)
	}

	// A branch forked before the handoff, merged after it: its commits are
	// new, the history before the handoff is not.
	base := gitOut(t, dir, "rev-list", "--max-parents=0", "HEAD")
	run(t, dir, "checkout", "-q", "-b", "side", base)
	os.WriteFile(filepath.Join(dir, "side.txt"), []byte("side\n"), 0o644)
	run(t, dir, "add", "-A")
	run(t, dir, "commit", "-qm", "side 1")
	commitN(t, dir, 2, "side")
	run(t, dir, "checkout", "-q", "main")
	run(t, dir, "merge", "-q", "--no-edit", "side")
	want, _ := strconv.Atoi(gitOut(t, dir, "rev-list", "--count", old+"..HEAD"))
	if c := since(dir, old); !c.Known || c.N != want {
		t.Errorf("after a merge: %+v, want %d (git rev-list)", c, want)
	}

	// History rewritten: the handoff's commit is not in HEAD's history.
	run(t, dir, "checkout", "-q", "--orphan", "fresh")
	run(t, dir, "commit", "-qm", "fresh start")
	if c := since(dir, old); !c.Known || !c.NotAncestor || c.String() != "" {
		t.Errorf("rewritten history: %+v", c)
	}

	// Bad inputs: nothing to count.
	for _, bad := range []string{"", "zz", "abc", "../../x"} {
		if c := since(dir, bad); c.Known {
			t.Errorf("since(%q) = %+v", bad, c)
		}
	}
	if c := (*git.Repo)(nil).CommitsSince("abcdef1", time.Now().Add(time.Minute)); c.Known {
		t.Errorf("nil repo: %+v", c)
	}
}

// TestCommitsSinceBound: past MaxCommitWalk commits the count is "1000+"
// (made with one fast-import, not 1,000 git commits).
func TestCommitsSinceBound(t *testing.T) {
	dir := hostileRepo(t)
	old := gitOut(t, dir, "rev-parse", "--short=7", "HEAD")
	var b bytes.Buffer
	n := git.MaxCommitWalk + 5
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "commit refs/heads/main\ncommitter t <t@t> %d +0000\ndata <<EOM\nc %d\nEOM\n", 1700000000+i, i)
		if i == 0 {
			b.WriteString("from refs/heads/main^0\n")
		}
		fmt.Fprintf(&b, "M 644 inline n.txt\ndata <<EOM\n%d\nEOM\n\n", i)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = dir, &b
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v\n%s", err, out)
	}
	run(t, dir, "reset", "-q", "--hard", "main")
	c := since(dir, old)
	if !c.Known || !c.More || c.N != git.MaxCommitWalk || c.String() != "1000+ commits" {
		t.Errorf("%d commits: %+v, want 1000+", n, c)
	}
}

// TestCommitsSinceHostile: a .git built to hang or crash the walk — a
// FIFO or a symlink where an object should be, a pack cut short, a pack
// and index of random bytes, random bytes flipped in a real pack — gives
// an unknown (or a count), within the deadline, and never panics.
func TestCommitsSinceHostile(t *testing.T) {
	mk := func(t *testing.T, pack bool) (string, string) {
		dir := hostileRepo(t)
		old := gitOut(t, dir, "rev-parse", "--short=7", "HEAD")
		commitN(t, dir, 3, "work")
		if pack {
			run(t, dir, "gc", "-q")
		}
		return dir, old
	}
	headObject := func(t *testing.T, dir string) string {
		h := gitOut(t, dir, "rev-parse", "HEAD")
		return filepath.Join(dir, ".git", "objects", h[:2], h[2:])
	}
	cases := map[string]func(t *testing.T) (string, string){
		"fifo-object": func(t *testing.T) (string, string) {
			dir, old := mk(t, false)
			p := headObject(t, dir)
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return dir, old
		},
		"symlink-object": func(t *testing.T) (string, string) {
			dir, old := mk(t, false)
			p := headObject(t, dir)
			os.Remove(p)
			os.Symlink("/dev/zero", p)
			return dir, old
		},
		"symlinked-objects-dir": func(t *testing.T) (string, string) {
			dir, old := mk(t, false)
			objs := filepath.Join(dir, ".git", "objects")
			os.Rename(objs, objs+".real")
			os.Symlink(objs+".real", objs)
			return dir, old
		},
		"pack-cut-short": func(t *testing.T) (string, string) {
			dir, old := mk(t, true)
			packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
			for _, p := range packs {
				os.Truncate(p, 40)
			}
			return dir, old
		},
		"random-pack-and-index": func(t *testing.T) (string, string) {
			dir, old := mk(t, true)
			r := rand.New(rand.NewSource(1))
			for _, g := range []string{"*.pack", "*.idx"} {
				ps, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", g))
				for _, p := range ps {
					fi, _ := os.Stat(p)
					b := make([]byte, fi.Size())
					r.Read(b)
					copy(b, map[string][]byte{"*.pack": []byte("PACK"), "*.idx": {0xff, 't', 'O', 'c', 0, 0, 0, 2}}[g])
					os.WriteFile(p, b, 0o644)
				}
			}
			return dir, old
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			dir, old := build(t)
			done := make(chan git.CommitCount, 1)
			go func() { done <- since(dir, old) }()
			select {
			case c := <-done:
				if c.Known && c.N != 3 {
					t.Errorf("a wrong count from a damaged store: %+v", c)
				}
			case <-time.After(time.Minute):
				t.Fatal("the walk blocked")
			}
		})
	}
	// Bytes flipped in a real pack, many times over: no panic escapes
	// (CommitsSince would turn one into an unknown, so the walk is run
	// without that net through the test hook).
	dir, old := mk(t, true)
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	orig, _ := os.ReadFile(packs[0])
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 300; i++ {
		b := append([]byte(nil), orig...)
		for k := 0; k < 1+r.Intn(8); k++ {
			b[12+r.Intn(len(b)-32)] ^= byte(1 + r.Intn(255))
		}
		os.WriteFile(packs[0], b, 0o644)
		if c := git.CommitsSinceNoRecover(git.Open(dir), old, time.Now().Add(time.Minute)); c.Known && c.N != 3 && !c.NotAncestor {
			t.Logf("flip %d: %+v", i, c) // a flipped parent id can change the history; only a panic fails
		}
	}
}

// FuzzApplyDelta: any base and delta give an object or an error, never a
// panic or an object past the bound.
func FuzzApplyDelta(f *testing.F) {
	f.Add([]byte("hello world"), []byte{11, 5, 0x90, 5})
	f.Add([]byte("abc"), []byte{3, 6, 0x91, 0, 3, 3, 'x', 'y', 'z'})
	f.Add([]byte{}, []byte{0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := git.ApplyDelta(base, delta)
		if err == nil && len(out) > 4<<20 {
			t.Fatalf("object of %d bytes", len(out))
		}
	})
}

// BenchmarkCommitsSince: the longest walk, MaxCommitWalk commits of a
// packed repository (git gc: commits stored as deltas), ending "1000+":
// 9–16 ms and 0.6 MB on this 2-core VM (StaleWalkBudget is 250 ms).
func BenchmarkCommitsSince(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "proj")
	os.MkdirAll(dir, 0o755)
	run := func(stdin *bytes.Buffer, args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		cmd.Dir = dir
		if stdin != nil {
			cmd.Stdin = stdin
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(nil, "init", "-q", "-b", "main")
	var in bytes.Buffer
	for i := 0; i <= git.MaxCommitWalk+5; i++ {
		fmt.Fprintf(&in, "commit refs/heads/main\ncommitter t <t@t> %d +0000\ndata <<EOM\nc %d\nEOM\nM 644 inline n.txt\ndata <<EOM\n%d\nEOM\n\n", 1700000000+i, i, i)
	}
	run(&in, "fast-import", "--quiet")
	run(nil, "reset", "-q", "--hard", "main")
	run(nil, "gc", "-q")
	repo := git.Open(dir)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if c := repo.CommitsSince("0000000", time.Now().Add(time.Minute)); !c.More {
			b.Fatalf("%+v", c)
		}
	}
}

// FuzzPackObject: any bytes as a packed object (header, size, delta
// base offsets and ids, zlib stream) give a count or an unknown, never a
// panic or a hang.
func FuzzPackObject(f *testing.F) {
	f.Add([]byte{0x10})                                     // a commit of size 0, no stream
	f.Add([]byte{0x95, 0x01, 0x78, 0x9c, 0x03, 0x00})       // a commit with a bad stream
	f.Add([]byte{0x60 | 0x05, 0x0c, 0x78, 0x9c})            // an ofs-delta pointing at the header
	f.Add(append([]byte{0x70 | 0x05}, make([]byte, 20)...)) // a ref-delta on a missing base
	// A ref-delta whose base is itself: go-git's Packfile would recurse
	// until the stack overflowed; the walk stops at maxDeltaDepth.
	var zd bytes.Buffer
	zdw := zlib.NewWriter(&zd)
	zdw.Write([]byte{5, 5, 0x05, 'h', 'e'})
	zdw.Close()
	f.Add(append(append([]byte{0x70 | 0x05, 0x11}, make([]byte, 19)...), zd.Bytes()...))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	// A whole commit whose parent is itself (the walk must not loop).
	commit := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 1100000000000000000000000000000000000000\n\nmsg\n")
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(commit)
	zw.Close()
	n := len(commit)
	f.Add(append([]byte{0x90 | byte(n&15), byte(n >> 4)}, z.Bytes()...))
	f.Fuzz(func(t *testing.T, body []byte) {
		c := git.WalkPack(t.TempDir(), body)
		if c.Known && c.N > 10 {
			t.Fatalf("%+v", c)
		}
	})
}

// TestCommitsSinceAroundOld: a branch forked before the handoff's commit
// (not at it) and merged after: its commits are new, and so are none of
// the commits before the handoff that the walk reaches around it.
func TestCommitsSinceAroundOld(t *testing.T) {
	dir := hostileRepo(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	commitN(t, dir, 3, "before")
	old := gitOut(t, dir, "rev-parse", "--short=7", "HEAD")
	commitN(t, dir, 2, "after")
	run(t, dir, "checkout", "-q", "-b", "side", base)
	commitN(t, dir, 4, "side")
	run(t, dir, "checkout", "-q", "main")
	run(t, dir, "merge", "-q", "--no-edit", "side")
	want, _ := strconv.Atoi(gitOut(t, dir, "rev-list", "--count", old+"..HEAD"))
	for _, gc := range []bool{false, true} {
		if gc {
			run(t, dir, "gc", "-q")
		}
		if c := since(dir, old); !c.Known || c.N != want {
			t.Errorf("packed %v: %+v, want %d (git rev-list)", gc, c, want)
		}
	}
}
