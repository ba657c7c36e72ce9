package redact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkStringClean is the cost of clean text: 4 KB of ordinary Go.
func BenchmarkStringClean(b *testing.B) {
	s := cleanSample(b)
	b.SetBytes(int64(len(s)))
	c0 := cpuSeconds()
	for b.Loop() {
		_ = String(s)
	}
	reportCPU(b, c0, len(s))
}

// reportCPU reports MB per CPU-second (run with -cpu 1): the README's speed
// figure, steadier than wall-clock MB/s on a loaded machine.
func reportCPU(b *testing.B, c0 float64, n int) {
	if cpu := cpuSeconds() - c0; cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/1e6/cpu, "MB/cpu-s")
	}
}

// BenchmarkStringCleanCorpus is the cost per MB of the whole clean corpus
// (code, logs, prose, YAML, shell), the hook path's usual input.
func BenchmarkStringCleanCorpus(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "clean", "*"))
	var sb strings.Builder
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		sb.Write(d)
	}
	s := sb.String()
	b.SetBytes(int64(len(s)))
	c0 := cpuSeconds()
	for b.Loop() {
		_ = String(s)
	}
	reportCPU(b, c0, len(s))
}

func BenchmarkStringSecrets(b *testing.B) {
	lines, err := secretLines(filepath.Join(corpusDir, "secrets.txt"))
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

func cleanSample(tb testing.TB) string {
	b, err := os.ReadFile(filepath.Join(corpusDir, "clean", "go.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b[:4096])
}
