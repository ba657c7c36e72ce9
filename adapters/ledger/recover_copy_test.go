package ledger

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSalvageCopyNeverWritesThroughALink: the copy a salvage reads is
// created anew; a symlink left at its name is replaced, not followed.
func TestSalvageCopyNeverWritesThroughALink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious"), 0o600)
	tmp := filepath.Join(dir, FileName+".salvage")
	if err := os.Symlink(victim, tmp); err != nil {
		t.Fatal(err)
	}
	if err := writeNew(tmp, []byte("copy")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("written through the link: %q", b)
	}
	if fi, err := os.Lstat(tmp); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the copy is not a new regular file: %v %v", fi, err)
	}
}
