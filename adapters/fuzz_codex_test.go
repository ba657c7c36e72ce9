package adapters_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// codexFuzzSeedLines adds every line of dir's *.jsonl fixtures to f (lines over
// 64 KiB are cut so the corpus stays small).
func codexFuzzSeedLines(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, dir, "*.jsonl"))
	shaped, _ := filepath.Glob(filepath.Join(fixtureDir, dir, "*", "*.jsonl")) // per-version shapes
	for _, p := range append(files, shaped...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) > 64<<10 {
				l = l[:64<<10]
			}
			if len(l) > 0 {
				f.Add(l)
			}
		}
	}
}

// codexFuzzSeedPayloads adds the payloads of dir's hooks.payloads to f.
func codexFuzzSeedPayloads(f *testing.F, dir string) {
	fh, err := os.Open(filepath.Join(fixtureDir, dir, "hooks.payloads"))
	if err != nil {
		f.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec struct {
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && len(rec.Payload) < 64<<10 {
			f.Add([]byte(rec.Payload))
		}
	}
}

// codexFuzzCheckRows fails on rows the ledger or distiller could not use.
func codexFuzzCheckRows(t *testing.T, lp adapters.LineParser, line []byte) {
	rows, err := lp.ParseLine(line, 42)
	if err != nil {
		t.Fatalf("ParseLine returned an error: %v", err)
	}
	again, _ := lp.ParseLine(line, 42)
	if !equalJSON(rows, again) {
		t.Fatal("ParseLine is not deterministic")
	}
	for _, r := range rows {
		if r.Key == "" || !validKinds[r.Kind] {
			t.Fatalf("bad row %+v", r)
		}
		if r.Kind == adapters.KindToolCall && r.ToolName == "" {
			t.Fatalf("tool call without a name: %+v", r)
		}
		if len(r.Text) > 9<<10 || len(r.Command) > 3<<10 {
			t.Fatalf("unbounded row text (%d) or command (%d)", len(r.Text), len(r.Command))
		}
	}
}

func FuzzCodexParseLine(f *testing.F) {
	codexFuzzSeedLines(f, "codex")
	lp := codexLP(f)
	f.Fuzz(func(t *testing.T, line []byte) { codexFuzzCheckRows(t, lp, line) })
}

func FuzzCodexParseHook(f *testing.F) {
	codexFuzzSeedPayloads(f, "codex")
	env := adapters.Env{Getenv: func(string) string { return "" }, Home: f.TempDir()}
	f.Fuzz(func(t *testing.T, payload []byte) {
		h, err := adapters.Codex.ParseHook("Stop", payload, env)
		if err != nil {
			if bytes.Contains([]byte(err.Error()), payload) && len(payload) > 8 {
				t.Fatal("error echoes the payload")
			}
			return
		}
		_ = adapters.Codex.(adapters.LineParser).Transcripts(h, env)
	})
}
