package ledger_test

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/adapters/ledger"
)

// benchRows parses n copies of the Claude fixture with unique uuids.
func benchRows(b *testing.B, copies int) []adapters.Row {
	src, err := os.ReadFile("../../testdata/adapters/claude/session-tools.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	lp := adapters.Claude.(adapters.LineParser)
	var rows []adapters.Row
	for i := 0; i < copies; i++ {
		for _, l := range bytes.Split(bytes.TrimSpace(src), []byte("\n")) {
			l = bytes.ReplaceAll(l, []byte(`"uuid":"`), []byte(`"uuid":"c`+strconv.Itoa(i)+`-`))
			l = bytes.ReplaceAll(l, []byte(`"toolu_`), []byte(`"toolu_c`+strconv.Itoa(i)+`_`))
			r, _ := lp.ParseLine(l, 0)
			rows = append(rows, r...)
		}
	}
	return rows
}

// BenchmarkWrite writes rows the way a cold ingest does: batches of 4096
// into a fresh ledger. Reported per row.
func BenchmarkWrite(b *testing.B) {
	rows := benchRows(b, 2000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l, err := ledger.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		ref := ledger.SessionRef{Tool: "claude", NativeID: "s", Project: "/p"}
		b.StartTimer()
		for j := 0; j < len(rows); j += 4096 {
			if _, err := l.Write(ledger.Batch{Session: ref, Rows: rows[j:min(j+4096, len(rows))]}, now); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		l.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
}

// BenchmarkWriteIncremental is a hook's write: 40 new rows and the cursor,
// in a fresh process (a new Open) on a session of 48,000 rows.
func BenchmarkWriteIncremental(b *testing.B) {
	rows := benchRows(b, 2000)
	dir := b.TempDir()
	l, err := ledger.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ref := ledger.SessionRef{Tool: "claude", NativeID: "s", Project: "/p"}
	base := min(48000, len(rows)-40*200)
	for j := 0; j < base; j += 4096 {
		if _, err := l.Write(ledger.Batch{Session: ref, Rows: rows[j:min(j+4096, base)]}, now); err != nil {
			b.Fatal(err)
		}
	}
	l.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l, err := ledger.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		from := base + (i%200)*40
		b.StartTimer()
		if _, err := l.Write(ledger.Batch{Session: ref, Rows: rows[from : from+40], Cursor: &adapters.Cursor{Path: "/t", Offset: int64(from)}}, now); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		l.Close()
		b.StartTimer()
	}
}
