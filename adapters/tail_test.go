package adapters_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

func tailAll(t *testing.T, path string, cur adapters.Cursor) ([]string, adapters.TailResult) {
	t.Helper()
	var lines []string
	res, err := adapters.Tail(path, cur, time.Time{}, func(l []byte, off int64) { lines = append(lines, string(l)) })
	if err != nil {
		t.Fatal(err)
	}
	return lines, res
}

func TestTailCompleteLinesOnly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(p, []byte("a\nb\npart"), 0o600)
	lines, res := tailAll(t, p, adapters.Cursor{})
	if strings.Join(lines, ",") != "a,b" || res.Cursor.Offset != 4 {
		t.Fatalf("lines=%v offset=%d", lines, res.Cursor.Offset)
	}
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("ial\nc\n")
	f.Close()
	lines, res = tailAll(t, p, res.Cursor)
	if strings.Join(lines, ",") != "partial,c" || res.Reset {
		t.Fatalf("lines=%v reset=%v", lines, res.Reset)
	}
	lines, _ = tailAll(t, p, res.Cursor)
	if len(lines) != 0 {
		t.Fatalf("re-tail gave %v", lines)
	}
}

func TestTailDetectsReplacementAndTruncation(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.jsonl")
	os.WriteFile(p, []byte("one\ntwo\n"), 0o600)
	_, res := tailAll(t, p, adapters.Cursor{})
	// Replaced by a new file with the same length prefix.
	q := filepath.Join(dir, "new")
	os.WriteFile(q, []byte("uno\ndos\ntres\n"), 0o600)
	os.Rename(q, p)
	lines, res2 := tailAll(t, p, res.Cursor)
	if !res2.Reset || strings.Join(lines, ",") != "uno,dos,tres" {
		t.Fatalf("replacement: reset=%v lines=%v", res2.Reset, lines)
	}
	// Truncated in place.
	os.WriteFile(p, []byte("x\n"), 0o600)
	lines, res3 := tailAll(t, p, res2.Cursor)
	if !res3.Reset || strings.Join(lines, ",") != "x" {
		t.Fatalf("truncation: reset=%v lines=%v", res3.Reset, lines)
	}
	// Rewritten in place, same inode, same size, different head.
	os.WriteFile(p, []byte("y\n"), 0o600)
	lines, res4 := tailAll(t, p, res3.Cursor)
	if !res4.Reset || strings.Join(lines, ",") != "y" {
		t.Fatalf("rewrite: reset=%v lines=%v", res4.Reset, lines)
	}
}

func TestTailLongLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	big := strings.Repeat("x", 3<<20) // over the reader buffer, under MaxLine
	os.WriteFile(p, []byte("a\n"+big+"\nb\n"), 0o600)
	lines, res := tailAll(t, p, adapters.Cursor{})
	if len(lines) != 3 || len(lines[1]) != len(big) || res.Skipped != 0 {
		t.Fatalf("got %d lines, skipped %d", len(lines), res.Skipped)
	}
}

// TestTailRewrittenInPlaceRegrown: a transcript truncated and rewritten in
// place (same inode) that is longer than before by the next read, with
// the same first kilobyte: the bytes before the saved offset changed, so
// reading starts over and no rewritten line is skipped.
func TestTailRewrittenInPlaceRegrown(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	line := func(tag string, i int) string {
		return fmt.Sprintf(`{"n":%d,"tag":%q,"pad":%q}`+"\n", i, tag, strings.Repeat("p", 80))
	}
	var first, second strings.Builder
	for i := range 20 {
		first.WriteString(line("old", i))
	}
	for i := range 40 {
		tag := "new"
		if i < 15 { // the same first 15 lines: the same head
			tag = "old"
		}
		second.WriteString(line(tag, i))
	}
	os.WriteFile(p, []byte(first.String()), 0o600)
	_, res := tailAll(t, p, adapters.Cursor{})
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0) // same inode
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(second.String())
	f.Close()
	lines, res2 := tailAll(t, p, res.Cursor)
	if !res2.Reset || len(lines) != 40 {
		t.Fatalf("rewrite in place: reset=%v, %d lines; want a reset and 40", res2.Reset, len(lines))
	}
	// Appending to it afterwards is read as an append.
	os.WriteFile(p, []byte(second.String()+line("more", 40)), 0o600)
	lines, res3 := tailAll(t, p, res2.Cursor)
	if res3.Reset || len(lines) != 1 {
		t.Fatalf("append after the rewrite: reset=%v lines=%v", res3.Reset, lines)
	}
}
