package adapters_test

import (
	"bytes"
	"testing"

	"github.com/carryover/carryover/adapters"
)

func FuzzGeminiParseLine(f *testing.F) {
	codexFuzzSeedLines(f, "gemini")
	lp := geminiLP(f)
	f.Fuzz(func(t *testing.T, line []byte) { codexFuzzCheckRows(t, lp, line) })
}

func FuzzGeminiParseHook(f *testing.F) {
	codexFuzzSeedPayloads(f, "gemini")
	env := adapters.Env{Getenv: func(string) string { return "" }, Home: f.TempDir()}
	f.Fuzz(func(t *testing.T, payload []byte) {
		h, err := adapters.Gemini.ParseHook("AfterAgent", payload, env)
		if err != nil {
			if bytes.Contains([]byte(err.Error()), payload) && len(payload) > 8 {
				t.Fatal("error echoes the payload")
			}
			return
		}
		_ = adapters.Gemini.(adapters.LineParser).Transcripts(h, env)
	})
}
