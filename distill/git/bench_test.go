package git_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/distill/git"
)

// BenchmarkStates is the hook path's git read: Open (HEAD, branch, the
// mapped index) and the state of three touched files in a 10,000-file
// repository, one of them modified, one touched (stat differs, content
// the same: hashed), one untracked.
func BenchmarkStates(b *testing.B) {
	dir := b.TempDir()
	run := func(stdin string, args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("", "init", "-q")
	os.WriteFile(filepath.Join(dir, "blob"), []byte("package x\n"), 0o644)
	run("", "add", "blob")
	for i := 0; i < 10000; i++ {
		p := fmt.Sprintf("d%02d/f%05d.go", i%100, i)
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte("package x\n"), 0o644)
	}
	run("", "add", "-A")
	run("", "commit", "-qm", "init")
	os.WriteFile(filepath.Join(dir, "d07/f00007.go"), []byte("package x // changed\n"), 0o644)
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(dir, "d50/f05050.go"), later, later)
	os.WriteFile(filepath.Join(dir, "new.go"), []byte("package x\n"), 0o644)
	files := []string{"d07/f00007.go", "d50/f05050.go", "new.go"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st := git.Open(dir).States(files); st[0] != git.Modified || st[1] != git.Clean || st[2] != git.Untracked {
			b.Fatal(st)
		}
	}
}
