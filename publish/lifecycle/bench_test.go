package lifecycle

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters/ledger"
	"github.com/carryover/carryover/distill"
	"github.com/carryover/carryover/publish"
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
	p := &publish.Project{Root: project, Home: filepath.Join(dir, "home"), Now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
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
		lc := Begin(p, l, h, "sess")
		text := publish.Render(h, publish.RenderOptions{Now: p.Now, ID: lc.ID, Decisions: lc.Decisions})
		lc.Record(text)
		if os.Getenv("NOHIST") == "" {
			if err := p.WriteProject(text, "claude"); err != nil {
				b.Fatal(err)
			}
		}
	}
}
