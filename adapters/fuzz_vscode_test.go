package adapters

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func FuzzVSCodeParseLine(f *testing.F) {
	fuzzSeedLines(f, "../testdata/adapters/vscode-copilot/*.jsonl", 16<<10, func(line []byte) { f.Add(line) })
	f.Fuzz(func(t *testing.T, line []byte) {
		rows, err := vscode{}.ParseLine(line, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.Key == "" || r.Kind == "" {
				t.Fatalf("row without key or kind: %+v", r)
			}
		}
	})
}

func FuzzVSCodeParseHook(f *testing.F) {
	fuzzSeedHooks(f, "../testdata/adapters/vscode-copilot/hooks.payloads")
	f.Add("Stop", []byte(`{"sessionId":"vscode-chat-session://local/Li4vLi4vZXRj"}`))
	f.Fuzz(func(t *testing.T, event string, payload []byte) {
		h, err := vscode{}.ParseHook(event, payload, Env{})
		if err != nil {
			return
		}
		// Locating files must not panic whatever the ids and paths are.
		_ = vscode{}.locate(h, Env{Home: t.TempDir()})
	})
}

// FuzzVSCodeReplay feeds whole chatSessions logs to the replayer.
func FuzzVSCodeReplay(f *testing.F) {
	files, _ := filepath.Glob("../testdata/adapters/vscode-copilot/User/workspaceStorage/*/chatSessions/*")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"kind":0,"v":{"requests":[]}}` + "\n" + `{"kind":2,"k":["requests",0,"response"],"i":-1,"v":[1]}{"kind":1,"k":["requests",0],"v":{}}`))
	f.Add([]byte(`{"kind":1,"k":["requests"],"v":[{"response":[{"kind":"toolInvocationSerialized","resultDetails":{"output":"x"}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := vscodeReplay(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		_ = vscodeRows(reqs)
		reqs, _ = vscodeFlat(bytes.NewReader(data))
		_ = vscodeRows(reqs)
	})
}

// FuzzVSCodeStoreAnywhere: any file given to `handoff --transcript` is
// sniffed, named and, when it looks like a store, read without panicking;
// a sniffed file is always one ReadStore reads by its content.
func FuzzVSCodeStoreAnywhere(f *testing.F) {
	exports, _ := filepath.Glob("../testdata/adapters/vscode-copilot/exports/*.json")
	for _, p := range exports {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"kind": 0, "v": {"requests": []}}`))
	f.Add([]byte("\ufeff{\"responderUsername\":\"x\",\"requests\":[{\"message\":\"hi\"}]}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "any name.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if vscodeStoreHead(b) != vscodeIsStore(path) && len(b) <= 64<<10 {
			t.Fatalf("vscodeStoreHead and vscodeIsStore disagree")
		}
		id := vscodeStoreID(path, "any name")
		if !plainID(id) {
			t.Fatalf("session id %q is not a plain id", id)
		}
		_, _ = vscode{}.ReadStore(Hook{SessionID: id, TranscriptPath: path}, Env{})
	})
}
