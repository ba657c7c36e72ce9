package adapters_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// FuzzClaudeParseLine: no panic on any line; rows well-formed.
func FuzzClaudeParseLine(f *testing.F) {
	files, _ := filepath.Glob("../testdata/adapters/claude/*.jsonl")
	shaped, _ := filepath.Glob("../testdata/adapters/claude/*/*.jsonl") // per-version shapes
	for _, p := range append(files, shaped...) {
		data, _ := os.ReadFile(p)
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	lp := adapters.Claude.(adapters.LineParser)
	f.Fuzz(func(t *testing.T, line []byte) {
		rows, err := lp.ParseLine(line, 0)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Key == "" {
				t.Fatal("row without key")
			}
		}
	})
}

// FuzzClaudeParseHook: no panic on any payload.
func FuzzClaudeParseHook(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","transcript_path":"/x.jsonl","cwd":"/p","hook_event_name":"Stop"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"session_id":7}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = adapters.Claude.ParseHook("Stop", b, adapters.Env{Getenv: func(string) string { return "" }})
	})
}
