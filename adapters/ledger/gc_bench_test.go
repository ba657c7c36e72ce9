package ledger

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

// BenchmarkGCVacuumStep: how long one incremental-vacuum step of gc holds
// the ledger (a hook waiting for it waits this long at most), after the
// rows of 16 sessions of ~5 MB each were pruned from a ledger that also
// keeps a newer session of ~16 MB (so pages move from the end of the file
// into the freed slots). Reported per step of vacuumPages pages.
func BenchmarkGCVacuumStep(b *testing.B) {
	var steps int
	var held time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l, err := Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		text := strings.Repeat("a line of a tool result with file contents\n", 40)
		for s := 0; s < 17; s++ {
			at, n := old, 3000
			if s == 16 {
				at, n = time.Now(), 9000 // written last: at the end of the file
			}
			var rows []adapters.Row
			for k := 0; k < n; k++ {
				rows = append(rows, adapters.Row{Key: fmt.Sprint(s, "-", k), Time: at, Role: "tool", Kind: adapters.KindToolResult, Text: text})
			}
			if _, err := l.Write(Batch{Session: SessionRef{Tool: "claude", NativeID: fmt.Sprint("s", s), Project: "/p"}, Rows: rows}, at); err != nil {
				b.Fatal(err)
			}
		}
		ids, err := l.db.Query(`SELECT id FROM sessions WHERE last_seen < ?`, old.Add(time.Hour).UnixMilli())
		if err != nil {
			b.Fatal(err)
		}
		var vs []int64
		for ids.Next() {
			var id int64
			ids.Scan(&id)
			vs = append(vs, id)
		}
		ids.Close()
		for _, id := range vs {
			if _, err := l.pruneSession(id, old.Add(time.Hour).UnixMilli()); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		for l.pragmaInt("freelist_count") > 0 {
			start := time.Now()
			if err := l.vacuumStep(); err != nil {
				b.Fatal(err)
			}
			held += time.Since(start)
			steps++
		}
		b.StopTimer()
		l.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(held.Milliseconds())/float64(steps), "ms/step")
	b.ReportMetric(float64(steps)/float64(b.N), "steps")
}
