package ledger

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOnlyGCVacuums: a hook never prunes or vacuums. In the whole program
// (test files aside) only `carryover gc` (cmd/cmd_gc.go, through the
// project service's Store.GC in publish/service/store.go) calls GC or
// Vacuum, and only gc.go issues a VACUUM or an incremental_vacuum; the
// ledger's auto-vacuum is incremental, so SQLite itself never vacuums at a
// commit.
func TestOnlyGCVacuums(t *testing.T) {
	root := filepath.Join("..", "..")
	calls := regexp.MustCompile(`\.(GC|Vacuum)\(`)
	pragma := regexp.MustCompile(`\bVACUUM\b|incremental_vacuum`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for i, line := range strings.Split(string(b), "\n") {
			code, _, _ := strings.Cut(line, "//")
			if calls.MatchString(code) && rel != filepath.Join("cmd", "cmd_gc.go") && rel != filepath.Join("publish", "service", "store.go") {
				t.Errorf("%s:%d calls GC or Vacuum: only `carryover gc` may", rel, i+1)
			}
			if pragma.MatchString(code) && rel != filepath.Join("adapters", "ledger", "gc.go") && !strings.Contains(code, "auto_vacuum") {
				t.Errorf("%s:%d vacuums: only gc.go may", rel, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
