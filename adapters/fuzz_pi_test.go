package adapters_test

import (
	"bytes"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// FuzzPiParseLine feeds Pi session lines (seeded from the fixtures) to the
// parser: it must never panic, and every row must be usable.
func FuzzPiParseLine(f *testing.F) {
	codexFuzzSeedLines(f, "pi")
	lp := adapters.Pi.(adapters.LineParser)
	f.Fuzz(func(t *testing.T, line []byte) { codexFuzzCheckRows(t, lp, line) })
}

func FuzzPiParseHook(f *testing.F) {
	codexFuzzSeedPayloads(f, "pi")
	env := adapters.Env{Getenv: func(string) string { return "" }, Home: f.TempDir()}
	f.Fuzz(func(t *testing.T, payload []byte) {
		h, err := adapters.Pi.ParseHook("agent_end", payload, env)
		if err != nil {
			if bytes.Contains([]byte(err.Error()), payload) && len(payload) > 8 {
				t.Fatal("error echoes the payload")
			}
			return
		}
		_ = adapters.Pi.(adapters.LineParser).Transcripts(h, env)
	})
}
