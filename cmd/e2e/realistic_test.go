package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readResult is the fixture's Read tool result line (the transcript
// carries the file's contents twice: in the result and in toolUseResult).
var readResult []byte

// fileBody is about n bytes of numbered source lines, different per seed.
func fileBody(seed, n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%d\tfunc handler%d_%d(w http.ResponseWriter, r *http.Request) error { return render(w, \"tmpl-%d\", r.URL.Query()) }\n", i, seed, i, (seed*31+i)%997)
	}
	return b.String()
}

// realisticLines is synthLines plus, per copy of the fixture, one Read
// result carrying a file of 2 to 24 KB: real transcripts are mostly tool
// results with file contents, which the densest fixture alone is not.
func realisticLines(tb testing.TB, from, n int) [][]byte {
	tb.Helper()
	if readResult == nil {
		src, err := os.ReadFile("../../testdata/adapters/claude/session-tools.jsonl")
		if err != nil {
			tb.Fatal(err)
		}
		for _, l := range bytes.Split(src, []byte("\n")) {
			if bytes.Contains(l, []byte(`"type":"text","file":{`)) {
				readResult = l
				break
			}
		}
		if readResult == nil {
			tb.Fatal("no Read result in the fixture")
		}
	}
	base := synthLines(tb, from, n)
	out := make([][]byte, 0, n+n/20)
	for i, l := range base {
		out = append(out, l)
		if i%20 != 19 {
			continue
		}
		seed := from + i
		body := fileBody(seed, 2048+(seed*7919)%(22<<10))
		numbered, _ := json.Marshal(body)
		plain, _ := json.Marshal(strings.ReplaceAll(body, "\t", " "))
		var m map[string]any
		if json.Unmarshal(readResult, &m) != nil {
			tb.Fatal("fixture line")
		}
		m["uuid"] = scatter(seed) + "-r-4bec68c2"
		msg := m["message"].(map[string]any)
		c := msg["content"].([]any)[0].(map[string]any)
		c["tool_use_id"] = "toolu_r" + strconv.Itoa(seed)
		c["content"] = json.RawMessage(numbered)
		m["toolUseResult"].(map[string]any)["file"].(map[string]any)["content"] = json.RawMessage(plain)
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	return out
}

// writeRealistic writes about size bytes of realisticLines.
func writeRealistic(tb testing.TB, path string, size int64) {
	writeLines(tb, path, size, realisticLines)
}

// scatter is a copy number as 8 hex digits in a random-looking order (a
// 32-bit multiplicative hash: distinct for distinct copies).
func scatter(n int) string {
	return fmt.Sprintf("%08x", uint32(n)*2654435761)
}
