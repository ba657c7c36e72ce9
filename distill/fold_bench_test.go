package distill_test

import (
	"path/filepath"
	"testing"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

// BenchmarkFold folds every fixture's rows (about what a cold hook-path
// rebuild folds): the cost of the distill rules per row.
func BenchmarkFold(b *testing.B) {
	var rows []ledger.Row
	for _, f := range fixtureFiles(b) {
		rows = append(rows, fixtureRows(b, filepath.Base(filepath.Dir(f)), f)...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		st := distill.NewState()
		for i := range rows {
			st.Add(&rows[i])
		}
		_ = st.Handoff(distill.Options{Project: "/home/dev-a/src/retrylib"})
	}
	b.ReportMetric(float64(len(rows)), "rows")
}
