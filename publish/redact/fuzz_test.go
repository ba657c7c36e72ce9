package redact_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/carryover/carryover/publish/redact"
)

func FuzzString(f *testing.F) {
	if lines, err := secretLines(filepath.Join(corpusDir, "secrets.txt")); err == nil {
		for _, l := range lines {
			f.Add(l.Text)
		}
	}
	files, _ := filepath.Glob(filepath.Join(corpusDir, "clean", "*"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			for l := range strings.Lines(string(b)) {
				f.Add(l)
			}
		}
	}
	f.Add("password=[REDACTED:password]")
	f.Add("\xff\xfeAKIA\x00ghp_")
	f.Fuzz(func(t *testing.T, s string) {
		out := redact.String(s)
		if ms := redact.Find(out); len(ms) != 0 {
			t.Fatalf("String(%q) = %q still has matches %v", s, out, ms)
		}
		if again := redact.String(out); again != out {
			t.Fatalf("not idempotent: String(%q) = %q; String again = %q", s, out, again)
		}
		ms := redact.Find(s)
		for i, m := range ms {
			if m.Start < 0 || m.End > len(s) || m.Start >= m.End || i > 0 && m.Start < ms[i-1].End {
				t.Fatalf("Find(%q) bad match %d: %v", s, i, ms)
			}
		}
	})
}
