//go:build !windows

package safefile_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/carryover/carryover/publish/safefile"
)

// TestAppend: an existing regular file grows by the line; a missing file,
// a symlink, a FIFO and a file the line would take past the bound are
// left alone (false, so the caller rewrites it atomically).
func TestAppend(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	os.WriteFile(f, []byte("a\n"), 0o600)
	if ok, err := safefile.Append(f, []byte("b\n"), 4); !ok || err != nil {
		t.Fatalf("append: %v, %v", ok, err)
	}
	if ok, _ := safefile.Append(f, []byte("c\n"), 5); ok {
		t.Fatal("appended past the bound")
	}
	if b, _ := os.ReadFile(f); string(b) != "a\nb\n" {
		t.Fatalf("file: %q", b)
	}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o600)
	os.Symlink(victim, filepath.Join(dir, "link"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"missing", "link", "fifo"} {
		if ok, _ := safefile.Append(filepath.Join(dir, n), []byte("x\n"), 1<<10); ok {
			t.Errorf("%s: appended", n)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("appended through a symlink: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("Append created a file")
	}
}

// TestMapFile: the mapping holds the file's bytes, the read checks hold
// (symlink, FIFO, bound), and an empty file maps to no bytes.
func TestMapFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("content\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "empty"), nil, 0o600)
	os.Symlink(filepath.Join(dir, "f"), filepath.Join(dir, "link"))
	syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600)
	d := mustDir(t, dir)
	b, err := d.MapFile("f", 1<<10)
	if err != nil || string(b) != "content\n" {
		t.Fatalf("map: %q, %v", b, err)
	}
	safefile.Unmap(b)
	if b, err := d.MapFile("empty", 1<<10); err != nil || len(b) != 0 {
		t.Fatalf("empty: %q, %v", b, err)
	}
	for _, n := range []string{"link", "fifo"} {
		if _, err := d.MapFile(n, 1<<10); err == nil {
			t.Errorf("%s: mapped", n)
		}
	}
	if _, err := d.MapFile("f", 4); err == nil {
		t.Error("mapped past the bound")
	}
}
