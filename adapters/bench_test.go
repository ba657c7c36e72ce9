package adapters_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// BenchmarkClaudeParseLine measures parsing throughput over a real transcript.
func BenchmarkClaudeParseLine(b *testing.B) {
	data, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			adapters.Claude.(adapters.LineParser).ParseLine(l, 0)
		}
	}
}
