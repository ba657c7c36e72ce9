package adapters_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/carryover/carryover/adapters"
)

// countingReader counts the bytes the rewind check reads.
type countingReader struct {
	r *bytes.Reader
	n int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.n += len(p)
	return c.r.ReadAt(p, off)
}

// TestClaudeRewindBoundedReads: lines whose parentUuid names no line of the file (the benchmark's synthetic
// transcript retags every uuid, a hand-made file) are no rewind, and the check reads no more than once back: a hook's
// tail reads the 16 KB before it and nothing else, a whole read at most one back-read (1 MB).
func TestClaudeRewindBoundedReads(t *testing.T) {
	src, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for i := 0; len(data) < 3<<20; i++ {
		data = append(data, bytes.ReplaceAll(src, []byte(`"uuid":"`), []byte(fmt.Sprintf(`"uuid":"c%d-`, i)))...)
	}
	tp := adapters.Claude.(adapters.TailParser)
	froms := []int{0}
	for at := len(data) - 60000; len(froms) < 30; at = bytes.IndexByte(data[at:], '\n') + at + 1 {
		froms = append(froms, bytes.IndexByte(data[at:], '\n')+at+1) // tails starting at every kind of line
	}
	for _, from := range froms {
		c := &countingReader{r: bytes.NewReader(data)}
		parse, off := tp.TailParser(c, int64(from)), from
		for _, l := range bytes.SplitAfter(data[from:], []byte("\n")) {
			rows, _ := parse(bytes.TrimSuffix(l, []byte("\n")), int64(off))
			for _, r := range rows {
				if r.Kind == adapters.KindRewind {
					t.Fatalf("from %d: a rewind at %d in lines that do not chain", from, off)
				}
			}
			off += len(l)
		}
		if limit := 16<<10 + 2<<20; c.n > limit || (from > 0 && c.n > 16<<10) {
			t.Errorf("from %d: read %d bytes back", from, c.n)
		}
	}
}
