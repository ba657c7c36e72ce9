package adapters

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

func FuzzWindsurfParseLine(f *testing.F) {
	cwaSeedLines(f, filepath.Join("..", "testdata", "adapters", "windsurf", "transcript.jsonl"), func(l []byte) { f.Add(l) })
	f.Add([]byte(`{"status":"done","type":"planner_response","timestamp":1788416100000,"planner_response":{"response":"ok"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		rows, err := windsurf{}.ParseLine(line, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Key == "" || (r.Kind == KindToolCall && r.ToolName == "") {
				t.Fatalf("bad row %+v", r)
			}
		}
	})
}

func FuzzWindsurfParseHook(f *testing.F) {
	cwaSeedLines(f, filepath.Join("..", "testdata", "adapters", "windsurf", "hooks.payloads"), func(l []byte) {
		var rec struct {
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(l, &rec) == nil {
			f.Add(rec.Event, []byte(rec.Payload))
		}
	})
	f.Fuzz(func(t *testing.T, event string, payload []byte) {
		h, err := windsurf{}.ParseHook(event, payload, Env{})
		if err != nil {
			return
		}
		for _, r := range h.Rows {
			if r.Key == "" || (r.Kind == KindToolCall && r.ToolName == "") {
				t.Fatalf("bad row %+v", r)
			}
		}
	})
}
