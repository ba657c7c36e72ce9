package adapters_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// TestSplitReadSameRows: a transcript read in two parts, the first stopping at
// any line boundary (a hook that fired while the agent was still writing, the
// next hook reading on from its cursor), gives the rows one whole read does,
// keyed as the ledger upserts them (a key's first row keeps its place, a later
// copy with other text replaces it). Codex's agent_message and its
// response_item copy are two lines one row; every line-parsing adapter's
// fixtures are checked, Codex's also inside each line.
func TestSplitReadSameRows(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), "t.jsonl")
	for _, name := range adapters.Names() {
		a, _ := adapters.Lookup(name)
		lp, ok := a.(adapters.LineParser)
		if !ok {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(fixtureDir, name, "*.jsonl"))
		shaped, _ := filepath.Glob(filepath.Join(fixtureDir, name, "*", "*.jsonl"))
		for _, f := range append(files, shaped...) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			whole := upserted(tailRows(t, lp, tmp, data, 0))
			// every line end, and for Codex a byte inside each line too (a
			// torn line waits for its end)
			var cuts []int
			for at := 1; at < len(data); at++ {
				if data[at-1] == '\n' {
					cuts = append(cuts, at)
				}
			}
			if name == "codex" {
				for i, prev := range append([]int{0}, cuts...) {
					if i < len(cuts) && cuts[i]-prev > 2 {
						cuts = append(cuts, (prev+cuts[i])/2)
					}
				}
			}
			for _, at := range cuts {
				if got := upserted(tailRows(t, lp, tmp, data, at)); !equalJSON(got, whole) {
					t.Errorf("%s: a read stopping at byte %d gave other rows than one whole read", f, at)
					break
				}
			}
		}
	}
}

// tailRows tails data as a file that first holds its first `at` bytes (all of
// it when at is 0), then the rest, from the first read's cursor.
func tailRows(t *testing.T, lp adapters.LineParser, path string, data []byte, at int) []adapters.Row {
	t.Helper()
	if at == 0 {
		at = len(data)
	}
	if err := os.WriteFile(path, data[:at], 0o600); err != nil {
		t.Fatal(err)
	}
	var rows []adapters.Row
	read := func(line []byte, off int64) {
		rs, _ := lp.ParseLine(line, off)
		rows = append(rows, rs...)
	}
	res, err := adapters.Tail(path, adapters.Cursor{}, time.Now().Add(time.Minute), read)
	if err != nil {
		t.Fatal(err)
	}
	if at < len(data) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(data[at:])
		f.Close()
		if _, err := adapters.Tail(path, res.Cursor, time.Now().Add(time.Minute), read); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

// upserted is rows as the ledger keeps them: one per key, in the first's place.
func upserted(rows []adapters.Row) []adapters.Row {
	at := map[string]int{}
	var out []adapters.Row
	for _, r := range rows {
		if i, ok := at[r.Key]; ok {
			if out[i].Text != r.Text || out[i].Kind != r.Kind {
				out[i] = r
			}
			continue
		}
		at[r.Key] = len(out)
		out = append(out, r)
	}
	return out
}
