package adapters_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// FuzzTail: random file contents and a random cursor never panic; the
// cursor stays within the file on a line boundary; only complete lines,
// at their true offsets, are handed out; tailing again from the returned
// cursor, after an append, yields exactly the lines that follow.
//
//	go test ./adapters -run XXX -fuzz FuzzTail -fuzztime 60s
func FuzzTail(f *testing.F) {
	seed, _ := os.ReadFile(filepath.Join("..", "testdata", "adapters", "claude", "session-tools.jsonl"))
	f.Add(seed, []byte("{\"more\":1}\n"), int64(0), uint64(0), "", int64(0))
	f.Add(seed, []byte("partial"), int64(100), uint64(1), "abc", int64(1024))
	f.Add([]byte("a\nb\npart"), []byte("ial\nc\n"), int64(2), uint64(0), "", int64(0))
	f.Add([]byte("\n\n\n"), []byte{}, int64(-5), uint64(7), "x", int64(-1))
	f.Add([]byte{}, []byte("x\n"), int64(1<<40), uint64(0), "", int64(1<<40))
	f.Fuzz(func(t *testing.T, data, more []byte, off int64, ino uint64, head string, headLen int64) {
		p := filepath.Join(t.TempDir(), "t.jsonl")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cur := adapters.Cursor{Path: p, Offset: off, Ino: ino, Head: head, HeadLen: headLen}
		res := tailCheck(t, p, data, cur)

		// Append, tail from the returned cursor: exactly the new complete
		// lines, continuing where the last call stopped.
		f2, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f2.Write(more)
		f2.Close()
		all := append(append([]byte{}, data...), more...)
		res2 := tailCheck(t, p, all, res.Cursor)
		if res2.Reset {
			t.Fatalf("an append was taken for a replacement (cursor %+v)", res.Cursor)
		}
		if res.Cursor.Offset > int64(len(data)) {
			t.Fatalf("first cursor %d beyond %d bytes", res.Cursor.Offset, len(data))
		}
		want := completeLines(all[res.Cursor.Offset:])
		if res2.Lines != want {
			t.Fatalf("second tail gave %d lines, want %d", res2.Lines, want)
		}
	})
}

// tailCheck tails p (whose bytes are data) from cur and checks the result.
func tailCheck(t *testing.T, p string, data []byte, cur adapters.Cursor) adapters.TailResult {
	t.Helper()
	var lines int
	last := int64(-1)
	res, err := adapters.Tail(p, cur, time.Time{}, func(line []byte, off int64) {
		lines++
		if off < 0 || off+int64(len(line)) >= int64(len(data)) {
			t.Fatalf("line at %d (+%d) outside a %d-byte file", off, len(line), len(data))
		}
		if off <= last {
			t.Fatalf("line offsets not increasing: %d after %d", off, last)
		}
		last = off
		if !bytes.Equal(line, data[off:off+int64(len(line))]) || data[off+int64(len(line))] != '\n' || bytes.IndexByte(line, '\n') >= 0 {
			t.Fatalf("line at %d is not a complete line of the file", off)
		}
		if off > 0 && data[off-1] != '\n' {
			t.Fatalf("line at %d does not start a line", off)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	o := res.Cursor.Offset
	if o < 0 || o > int64(len(data)) || (o > 0 && data[o-1] != '\n') {
		t.Fatalf("cursor %d is not a line boundary of a %d-byte file", o, len(data))
	}
	if res.Lines != lines || res.Partial {
		t.Fatalf("result says %d lines (partial %v), %d seen", res.Lines, res.Partial, lines)
	}
	// Without a deadline everything complete from the start offset is read.
	if rest := data[o:]; bytes.IndexByte(rest, '\n') >= 0 {
		t.Fatalf("complete lines left unread after offset %d", o)
	}
	return res
}

func completeLines(b []byte) int { return bytes.Count(b, []byte("\n")) }
