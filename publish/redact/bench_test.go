package redact

import (
	"path/filepath"
	"strings"
	"testing"
)

func BenchmarkStringClean(b *testing.B) {
	s := cleanSample()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = String(s)
	}
}

func BenchmarkStringSecrets(b *testing.B) {
	lines, err := SecretLines(filepath.Join(corpusDir, "secrets.txt"))
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString(l.Text)
		sb.WriteByte('\n')
	}
	s := sb.String()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = String(s)
	}
}
