package redact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	f.Add("contraseña es Tr0ub4dor3x; пароль — Hq7nVx2Lp9Kd パスワードはXk9vR2mQp4Lzです 密码是 \\\"Tr0ub4dor3x\\\"")
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if ms := Find(out); len(ms) != 0 {
			t.Fatalf("String(%q) = %q still has matches %v", s, out, ms)
		}
		if again := String(out); again != out {
			t.Fatalf("not idempotent: String(%q) = %q; String again = %q", s, out, again)
		}
		ms := Find(s)
		for i, m := range ms {
			if m.Start < 0 || m.End > len(s) || m.Start >= m.End || i > 0 && m.Start < ms[i-1].End {
				t.Fatalf("Find(%q) bad match %d: %v", s, i, ms)
			}
		}
	})
}
