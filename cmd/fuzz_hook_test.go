package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// FuzzHookPayload runs Snapshot on random stdin for every tool, with a
// temp CARRYOVER_HOME and HOME: it never panics (Snapshot recovers, so a
// recovered panic in the log fails the test), and stdout is empty or one
// valid JSON value. Seeded from every adapter's recorded hooks.payloads.
//
// Every path-like string in the payload is moved into the sandbox first
// (".jsonl" paths to a copy of a Claude fixture), so that the fuzzer cannot
// make Snapshot write .carryover/ or AGENTS.md anywhere else.
//
//	go test ./cmd -run XXX -fuzz FuzzHookPayload -fuzztime 60s
func FuzzHookPayload(f *testing.F) {
	sandbox := f.TempDir()
	fixture, err := os.ReadFile(filepath.Join("..", "testdata", "adapters", "claude", "session-tools.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	transcript := filepath.Join(sandbox, "t.jsonl")
	if err := os.WriteFile(transcript, fixture, 0o600); err != nil {
		f.Fatal(err)
	}
	seeds, _ := filepath.Glob(filepath.Join("..", "testdata", "adapters", "*", "hooks.payloads"))
	for _, p := range seeds {
		fh, err := os.Open(p)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		// A few per agent: each input runs Snapshot for every tool.
		for n := 0; n < 6 && sc.Scan(); n++ {
			var rec struct {
				Event   string          `json:"event"`
				Payload json.RawMessage `json:"payload"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && len(rec.Payload) > 0 {
				f.Add(rec.Event, []byte(rec.Payload))
			}
		}
		fh.Close()
	}
	f.Add("SessionStart", []byte(`{"session_id":"s","transcript_path":"/x/s.jsonl","cwd":"p","source":"resume"}`))
	f.Add("Stop", []byte(``))
	f.Add("", []byte(`{"session_id":"s","cwd":"../../.."}`))

	home := filepath.Join(sandbox, "home")
	chome := filepath.Join(sandbox, "co")
	vars := map[string]string{"HOME": home, "CARRYOVER_HOME": chome, "CARRYOVER_DEADLINE_MS": "300"}
	f.Fuzz(func(t *testing.T, event string, payload []byte) {
		t.Chdir(sandbox) // a payload without cwd resolves to the process's cwd
		payload = confine(payload, sandbox, transcript)
		for _, tool := range adapters.Names() {
			var out, errb bytes.Buffer
			e := &Env{Stdin: bytes.NewReader(payload), Stdout: &out, Stderr: &errb,
				Getenv: func(k string) string { return vars[k] }, Now: time.Now,
				Clipboard: func(string) error { return nil }}
			logPath := filepath.Join(chome, "carryover.log")
			os.Remove(logPath)
			Snapshot(e, tool, event)
			if log, _ := os.ReadFile(logPath); bytes.Contains(log, []byte("internal error")) {
				t.Fatalf("%s: Snapshot panicked: %s", tool, log)
			}
			if s := out.Bytes(); len(s) > 0 && (!json.Valid(s) || bytes.Count(bytes.TrimSpace(s), []byte("\n")) > 0) {
				t.Fatalf("%s: stdout is not one JSON value: %q", tool, s)
			}
		}
	})
}

// confine rewrites every string in a JSON payload that could name a place
// on disk into the sandbox. Non-JSON input only loses its separators.
func confine(payload []byte, sandbox, transcript string) []byte {
	var v any
	if json.Unmarshal(payload, &v) != nil {
		payload = bytes.ReplaceAll(payload, []byte(".."), []byte("__"))
		payload = bytes.ReplaceAll(payload, []byte("/"), []byte("_"))
		return bytes.ReplaceAll(payload, []byte(`\`), []byte("_"))
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case string:
			if !strings.ContainsAny(x, `/\~`) && !strings.Contains(x, "..") && !strings.HasPrefix(x, "file:") {
				return x
			}
			if strings.HasSuffix(x, ".jsonl") {
				return transcript
			}
			r := strings.NewReplacer("..", "__", "/", "_", `\`, "_", "~", "_", ":", "_")
			return filepath.Join(sandbox, "p", r.Replace(x))
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return x
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return nil
	}
	return b
}
