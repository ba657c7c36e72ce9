package publish

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
)

// BenchmarkLifecycleStop is what the lifecycle adds to a Stop that
// publishes: the id, the decisions log (5 extracted, all known after the
// first turn), the pinned task, the record and the history file.
func BenchmarkLifecycleStop(b *testing.B) {
	dir := b.TempDir()
	l, err := ledger.Open(filepath.Join(dir, "home"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	project := filepath.Join(dir, "p")
	p := &Project{Root: project, Home: filepath.Join(dir, "home"), Now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	if err := os.MkdirAll(project, 0o700); err != nil {
		b.Fatal(err)
	}
	h := distill.Handoff{Tool: "claude", SessionID: 1, Task: "t", Next: "n"}
	for i := 0; i < 5; i++ {
		h.Decisions = append(h.Decisions, fmt.Sprintf("decision %d", i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Now = p.Now.Add(time.Second)
		lc := p.lifecycleInputs(l, h, "sess")
		text := Render(h, RenderOptions{Now: p.Now, ID: lc.id, Decisions: lc.decisions})
		p.recordLifecycle(l, lc, h, "sess", text)
		if os.Getenv("NOHIST") == "" {
			if _, err := WriteHistory(project, lc.id, text, 0, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}
