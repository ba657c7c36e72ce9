package safefile_test

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/carryover/carryover/publish/safefile"
)

var recycled = safefile.Options{Mode: 0o600, Recycle: true}

func ino(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestRecycleRotatesTwoInodes: after the first rewrite the old inode is
// kept as the spare, and later writes rotate the two (no new inode per
// write), each leaving the file whole.
func TestRecycleRotatesTwoInodes(t *testing.T) {
	dir := t.TempDir()
	d := mustDir(t, dir)
	f := filepath.Join(dir, "handoff.md")
	seen := map[uint64]bool{}
	for i, text := range []string{"one\n", "two, longer\n", "3\n", "four four\n", "five\n"} {
		if err := d.Write("handoff.md", []byte(text), recycled); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(f); string(b) != text {
			t.Fatalf("write %d: %q", i, b)
		}
		if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v", fi.Mode())
		}
		seen[ino(t, f)] = true
	}
	if len(seen) != 2 {
		t.Fatalf("%d inodes for five writes, want 2 in rotation", len(seen))
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 { // handoff.md and the spare
		t.Fatalf("left behind: %v", ents)
	}
}

// TestRecycleSparesAReader: a reader holding an earlier version open
// keeps reading it whole: the spare it holds is not rewritten (a write
// lease is refused while it is open), the write makes a new file.
func TestRecycleSparesAReader(t *testing.T) {
	dir := t.TempDir()
	d := mustDir(t, dir)
	f := filepath.Join(dir, "handoff.md")
	d.Write("handoff.md", []byte("first\n"), recycled)
	d.Write("handoff.md", []byte("second\n"), recycled) // "first" is the spare now
	r, err := os.Open(f)                                // a reader of "second"
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d.Write("handoff.md", []byte("third\n"), recycled)   // reuses "first"; "second" becomes the spare
	d.Write("handoff.md", []byte("fourth!\n"), recycled) // "second" is held open: not rewritten
	held, _ := r.Stat()
	if ino(t, filepath.Join(dir, ".carryover-spare")) != held.Sys().(*syscall.Stat_t).Ino {
		t.Fatal("the held file is no longer the spare: it was claimed while open")
	}
	if b, _ := io.ReadAll(r); string(b) != "second\n" {
		t.Fatalf("the reader saw %q", b)
	}
	if b, _ := os.ReadFile(f); string(b) != "fourth!\n" {
		t.Fatalf("file: %q", b)
	}
}

// TestRecycleLeavesStrangersAlone: a spare that is a symlink, has another
// link or is not 0600 (shipped by a repository) is never written into.
func TestRecycleLeavesStrangersAlone(t *testing.T) {
	for _, kind := range []string{"symlink", "hardlink", "0644"} {
		t.Run(kind, func(t *testing.T) {
			// One temp directory for both, so a hard link always works.
			base := t.TempDir()
			dir := filepath.Join(base, "project")
			os.Mkdir(dir, 0o700)
			victim := filepath.Join(base, "victim")
			os.WriteFile(victim, []byte("precious\n"), 0o600)
			spare := filepath.Join(dir, ".carryover-spare")
			switch kind {
			case "symlink":
				os.Symlink(victim, spare)
			case "hardlink":
				if err := os.Link(victim, spare); err != nil {
					t.Fatal(err)
				}
			case "0644":
				os.WriteFile(spare, []byte("shipped\n"), 0o644)
				victim = spare
			}
			d := mustDir(t, dir)
			os.WriteFile(filepath.Join(dir, "handoff.md"), []byte("old\n"), 0o600)
			if err := d.Write("handoff.md", []byte("new\n"), recycled); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "handoff.md")); string(b) != "new\n" {
				t.Fatalf("handoff.md: %q", b)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" && string(b) != "shipped\n" {
				t.Fatalf("the spare's target was written: %q", b)
			}
		})
	}
}
