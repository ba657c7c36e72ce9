package adapters_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// rewindRows parses data as the ingest does, in tails starting at each of cuts (offsets of line starts): the rewind
// rows, as "key→first abandoned key".
func rewindRows(data []byte, cuts ...int) []string {
	tp := adapters.Claude.(adapters.TailParser)
	var got []string
	for i, from := range append([]int{0}, cuts...) {
		end := len(data)
		if i < len(cuts) {
			end = cuts[i]
		}
		parse, off := tp.TailParser(bytes.NewReader(data), int64(from)), from
		for _, l := range bytes.SplitAfter(data[from:end], []byte("\n")) {
			rows, _ := parse(bytes.TrimSuffix(l, []byte("\n")), int64(off))
			for _, r := range rows {
				if r.Kind == adapters.KindRewind {
					got = append(got, r.Key+"→"+r.Text)
				}
			}
			off += len(l)
		}
	}
	return got
}

// TestClaudeRewindTails: every rewind fixture — a parent named earlier (Esc-Esc, an edited prompt) or none (a
// rewind to the very first prompt: null parentUuid, as the first line writes; the held-out one's branch starts at a
// hook attachment, in German) — yields one rewind naming the same first abandoned row whether the file is read whole
// or as a hook reads it (a tail starting at the new branch), and also when a 1.5 MB tool result lies between the
// parent and the rewind (the read back used to stop at 1 MB). Null parents on lines that never chained (a hand-made
// file writing them everywhere) are no rewind, nor is one on a line that starts no turn.
func TestClaudeRewindTails(t *testing.T) {
	files, _ := filepath.Glob("../testdata/adapters/claude/rewind/*.jsonl")
	if len(files) < 4 {
		t.Fatalf("rewind fixtures: %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		whole := rewindRows(data)
		if len(whole) != 1 {
			t.Fatalf("%s: rewinds %q, want one", f, whole)
		}
		key := strings.TrimPrefix(strings.Split(whole[0], "→")[0], "rewind:")
		cut := bytes.LastIndexByte(data[:bytes.Index(data, []byte(`"uuid":"`+key))], '\n') + 1
		if got := rewindRows(data, cut); len(got) != 1 || got[0] != whole[0] {
			t.Errorf("%s read in two tails: %q, want %q", filepath.Base(f), got, whole)
		}
		// The last tool result before the rewind, padded past the old 1 MB read back.
		res := bytes.LastIndex(data[:cut], []byte(`"type":"tool_result","content":"`)) + len(`"type":"tool_result","content":"`)
		big := append(append(append([]byte{}, data[:res]...), bytes.Repeat([]byte("x"), 3<<19)...), data[res:]...)
		for _, got := range [][]string{rewindRows(big), rewindRows(big, cut+3<<19)} {
			if len(got) != 1 || got[0] != whole[0] {
				t.Errorf("%s with its parent 1.5 MB back: %q, want %q", filepath.Base(f), got, whole)
			}
		}
	}
	nulls, err := os.ReadFile("../testdata/adapters/claude/session-background-shell.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if got := rewindRows(nulls, bytes.IndexByte(nulls, '\n')+1); len(got) > 0 {
		t.Errorf("null parents on every line: rewinds %q", got)
	}
	// A hand-made API error line with a null parent after lines that chained: no turn starts there.
	chained, err := os.ReadFile("../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	chained = append(chained, `{"parentUuid":null,"isSidechain":false,"type":"assistant","uuid":"lim-1","timestamp":"2026-11-21T09:30:00.000Z","message":{"id":"m-lim","model":"<synthetic>","role":"assistant","type":"message","content":[{"type":"text","text":"Rate limited"}]},"isApiErrorMessage":true}`+"\n"...)
	if got := rewindRows(chained); len(got) > 0 {
		t.Errorf("an assistant line with a null parent: rewinds %q", got)
	}
}

// TestClaudeRewindAnyCut: every Claude fixture read as two tails split before any of its lines (a hook's Stop can
// start anywhere) yields the rewinds a whole read does: the 16 KB before a tail stand in for the lines already read.
// Among them a prompt stored anew (2.1.332 writes it again under a fresh uuid with sentAsUuid, the uuid its children
// name): no rewind, and the held-out file's real one after it is still seen.
func TestClaudeRewindAnyCut(t *testing.T) {
	files, _ := filepath.Glob("../testdata/adapters/claude/*/*.jsonl")
	more, _ := filepath.Glob("../testdata/adapters/claude/*.jsonl")
	for _, f := range append(files, more...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		whole := strings.Join(rewindRows(data), " ")
		cut := 0
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if cut += len(l); cut >= len(data) {
				break
			}
			if got := strings.Join(rewindRows(data, cut), " "); got != whole {
				t.Errorf("%s cut at %d: rewinds %q, whole %q", filepath.Base(f), cut, got, whole)
			}
		}
	}
}
