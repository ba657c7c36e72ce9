package adapters

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// fuzzSeedLines adds every line of the fixtures matching glob (up to max
// bytes each) to f.
func fuzzSeedLines(f *testing.F, glob string, max int, add func(line []byte)) {
	files, _ := filepath.Glob(glob)
	for _, p := range files {
		fh, err := os.Open(p)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			if len(sc.Bytes()) <= max {
				add(append([]byte(nil), sc.Bytes()...))
			}
		}
		fh.Close()
	}
}

// fuzzSeedHooks adds the payloads of a hooks.payloads fixture.
func fuzzSeedHooks(f *testing.F, path string) {
	fuzzSeedLines(f, path, 1<<20, func(line []byte) {
		var rec struct {
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(line, &rec) == nil {
			f.Add(rec.Event, []byte(rec.Payload))
		}
	})
}

func FuzzCopilotCLIParseLine(f *testing.F) {
	fuzzSeedLines(f, "../testdata/adapters/copilot-cli/*.jsonl", 16<<10, func(line []byte) { f.Add(line) })
	f.Add([]byte(`{"type":"tool.execution_complete","data":{"toolCallId":"c","success":true,"shellExecution":{"exitCode":1e99}}}`))
	f.Add([]byte(`{"type":"assistant.message","data":{"toolRequests":[{"toolCallId":"p","name":"apply_patch","arguments":{"input":"*** Update File: \n*** Move to: x\n+"}}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		rows, err := copilotCLI{}.ParseLine(line, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Key == "" || r.Kind == "" {
				t.Fatalf("row without key or kind: %+v", r)
			}
			if r.Kind == KindToolCall && r.ToolName == "" {
				t.Fatalf("tool call without name: %+v", r)
			}
		}
	})
}

func FuzzCopilotCLIParseHook(f *testing.F) {
	fuzzSeedHooks(f, "../testdata/adapters/copilot-cli/hooks.payloads")
	f.Fuzz(func(t *testing.T, event string, payload []byte) {
		env := Env{Home: "/home/u", Getenv: func(string) string { return "" }}
		h, err := copilotCLI{}.ParseHook(event, payload, env)
		if err != nil {
			return
		}
		for _, tr := range (copilotCLI{}).Transcripts(h, env) {
			if tr.Path == "" {
				t.Fatal("empty transcript path")
			}
		}
	})
}

// FuzzCopilotScan: a flush mark from any payload and any events.jsonl
// bytes never panic the wait's scanner, and a mark it reports found is on
// a hook.start line.
func FuzzCopilotScan(f *testing.F) {
	f.Add([]byte(`{"sessionId":"s","timestamp":1795797499403}`), []byte(`{"type":"hook.start","data":{"input":{"timestamp":1795797499403}}}`+"\n"))
	f.Add([]byte(`{"timestamp":"2026-11-27T10:00:03.000Z"}`), []byte("{\"type\":\"hook.start\"\n"))
	f.Fuzz(func(t *testing.T, payload, file []byte) {
		h, err := copilotCLI{}.ParseHook("sessionEnd", payload, Env{})
		if err != nil || h.FlushMark == "" {
			return
		}
		path := filepath.Join(t.TempDir(), "events.jsonl")
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		var buf []byte
		found, next := copilotScanFrom(path, -1, []byte(h.FlushMark), &buf)
		if next < 0 || next > int64(len(file)) {
			t.Fatalf("next offset %d outside the file (%d bytes)", next, len(file))
		}
		if found && !bytes.Contains(file, []byte(h.FlushMark)) {
			t.Fatal("found a mark the file does not hold")
		}
	})
}
