package adapters_test

import (
	"bytes"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// FuzzQwenParseLine feeds Qwen Code chats lines (seeded from the fixtures)
// to the parser: it must never panic, and every row must be usable.
func FuzzQwenParseLine(f *testing.F) {
	codexFuzzSeedLines(f, "qwen")
	lp := adapters.Qwen.(adapters.LineParser)
	f.Fuzz(func(t *testing.T, line []byte) { codexFuzzCheckRows(t, lp, line) })
}

func FuzzQwenParseHook(f *testing.F) {
	codexFuzzSeedPayloads(f, "qwen")
	env := adapters.Env{Getenv: func(string) string { return "" }, Home: f.TempDir()}
	f.Fuzz(func(t *testing.T, payload []byte) {
		h, err := adapters.Qwen.ParseHook("Stop", payload, env)
		if err != nil {
			if bytes.Contains([]byte(err.Error()), payload) && len(payload) > 8 {
				t.Fatal("error echoes the payload")
			}
			return
		}
		_ = adapters.Qwen.(adapters.LineParser).Transcripts(h, env)
	})
}
