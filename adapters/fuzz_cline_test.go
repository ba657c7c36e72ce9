package adapters_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// FuzzClineReadStore feeds Cline session documents (seeded from the
// fixtures) to the reader: it must never panic, every row must be usable,
// and an error must not echo the document.
func FuzzClineReadStore(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(fixtureDir, "cline", "*", "*.json"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"sessionId":"x","messages":[{"role":"user","content":"<user_input mode=\"act\">"}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","content":[{"success":false}]}]}]}`))
	sr := adapters.Cline.(adapters.StoreReader)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, doc []byte) {
		path := filepath.Join(dir, "s.messages.json")
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := sr.ReadStore(adapters.Hook{Tool: "cline", SessionID: "s", TranscriptPath: path}, adapters.Env{})
		if err != nil {
			if len(doc) > 8 && bytes.Contains([]byte(err.Error()), doc) {
				t.Fatal("error echoes the document")
			}
			return
		}
		for i, r := range rows {
			if r.Key == "" || r.Kind == "" || (r.Kind == adapters.KindToolCall && r.ToolName == "") {
				t.Fatalf("row %d unusable: %+v", i, r)
			}
		}
		l, _ := adapters.ListerFor("cline")
		_, _ = l.Describe(path)
	})
}

func FuzzClineParseHook(f *testing.F) {
	codexFuzzSeedPayloads(f, "cline")
	f.Fuzz(func(t *testing.T, payload []byte) {
		_, err := adapters.Cline.ParseHook("TaskComplete", payload, adapters.Env{})
		if err != nil && len(payload) > 8 && bytes.Contains([]byte(err.Error()), payload) {
			t.Fatal("error echoes the payload")
		}
	})
}
