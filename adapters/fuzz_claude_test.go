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

// FuzzClaudeTailParser: a tail of any bytes, started at any offset, parsed as the ingest parses it (the rewind
// check reads the bytes before the tail and, on a fork, those before the line): no panic, rows well-formed, the same
// rows twice. Seeds: the rewind fixtures, whole and cut.
func FuzzClaudeTailParser(f *testing.F) {
	files, _ := filepath.Glob("../testdata/adapters/claude/rewind/*.jsonl")
	for _, p := range files {
		data, _ := os.ReadFile(p)
		f.Add(data, uint16(0))
		f.Add(data, uint16(len(data)/2))
	}
	f.Add([]byte(`{"parentUuid":"a","uuid":"b","type":"user","message":{"role":"user","content":"x"}}`+"\n"), uint16(0))
	tp := adapters.Claude.(adapters.TailParser)
	f.Fuzz(func(t *testing.T, data []byte, from uint16) {
		start := min(int(from), len(data))
		run := func() []adapters.Row {
			parse := tp.TailParser(bytes.NewReader(data), int64(start))
			var out []adapters.Row
			off := start
			for _, l := range bytes.SplitAfter(data[start:], []byte("\n")) {
				rows, _ := parse(bytes.TrimSuffix(l, []byte("\n")), int64(off))
				out = append(out, rows...)
				off += len(l)
			}
			return out
		}
		rows := run()
		for _, r := range rows {
			if r.Key == "" || (r.Kind == adapters.KindRewind && r.Text == "") {
				t.Fatalf("bad row %+v", r)
			}
		}
		if again := run(); len(again) != len(rows) {
			t.Fatal("not deterministic")
		}
	})
}
