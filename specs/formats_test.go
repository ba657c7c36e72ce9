package specs

import (
	"testing"

	"github.com/carryover/carryover/adapters"
)

// TestFormatsAgreeWithTable: the newest shape each adapter says it reads
// (its descriptor's Format) is the newest version the table's newest row was
// tested against, and every agent of the table has its shapes written down.
// Bumping "tested" without checking the reader (or the reverse) fails here.
func TestFormatsAgreeWithTable(t *testing.T) {
	tab := mustLoad(t)
	for _, tool := range tab.Tools() {
		a, ok := adapters.ByName(tool.Name)
		if !ok || a.Name != tool.Name {
			t.Errorf("adapters.All has no agent %s", tool.Name)
			continue
		}
		f := a.Format
		if len(f.Shapes) == 0 {
			t.Errorf("%s: its Format lists no shapes", tool.Name)
		}
		tested := tool.Rows[len(tool.Rows)-1].Tested
		if f.Newest != tested {
			t.Errorf("%s: Format's newest shape %q, tools.toml newest row tested %q", tool.Name, f.Newest, tested)
		}
	}
	for _, a := range adapters.All {
		if _, ok := tab.Tool(a.Name); !ok {
			t.Errorf("%s is not an agent of tools.toml", a.Name)
		}
	}
}
