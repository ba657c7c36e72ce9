package adapters

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// cwaSeedLines (Cursor/Windsurf/Aider) adds every line of a fixture file to the corpus.
func cwaSeedLines(f *testing.F, path string, each func(line []byte)) {
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		each(append([]byte(nil), sc.Bytes()...))
	}
}

func FuzzCursorParseLine(f *testing.F) {
	cwaSeedLines(f, filepath.Join("..", "testdata", "adapters", "cursor", "agent-transcript.jsonl"), func(l []byte) { f.Add(l) })
	f.Add([]byte(`{"role":"user","message":{"content":"<user_query>x</user_query> [CARRYOVER]"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		rows, err := cursor{}.ParseLine(line, 0)
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

func FuzzCursorParseHook(f *testing.F) {
	cwaSeedLines(f, filepath.Join("..", "testdata", "adapters", "cursor", "hooks.payloads"), func(l []byte) {
		var rec struct {
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(l, &rec) == nil {
			f.Add(rec.Event, []byte(rec.Payload))
		}
	})
	f.Fuzz(func(t *testing.T, event string, payload []byte) {
		h, err := cursor{}.ParseHook(event, payload, Env{})
		if err != nil {
			return
		}
		for _, r := range h.Rows {
			if r.Key == "" {
				t.Fatalf("row without key %+v", r)
			}
		}
	})
}

// FuzzCursorStore feeds composerData and bubble JSON (as found in
// state.vscdb) to the row builder.
func FuzzCursorStore(f *testing.F) {
	cwaSeedLines(f, filepath.Join("..", "testdata", "adapters", "cursor", "state-vscdb-rows.ndjson"), func(l []byte) {
		var rec struct {
			Key   string
			Value json.RawMessage
		}
		if json.Unmarshal(l, &rec) == nil {
			f.Add([]byte(`{"fullConversationHeadersOnly":[{"bubbleId":"b"}],"status":"error"}`), []byte(rec.Value))
		}
	})
	f.Fuzz(func(t *testing.T, composer, bubble []byte) {
		var c cursorComposer
		_ = json.Unmarshal(composer, &c)
		var b cursorBubble
		if json.Unmarshal(bubble, &b) != nil {
			return
		}
		rows := cursorComposerRows(c, map[string]cursorBubble{"b": b, "x": b})
		for _, r := range rows {
			if r.Key == "" || (r.Kind == KindToolCall && r.ToolName == "") {
				t.Fatalf("bad row %+v", r)
			}
		}
	})
}
