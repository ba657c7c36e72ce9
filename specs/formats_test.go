package specs

import (
	"testing"

	"github.com/carryover/carryover/adapters"
)

// TestFormatsAgreeWithTable: the newest shape each adapter says it reads
// (adapters.Formats) is the newest version the table's newest row was
// tested against, and every agent of the table has its shapes written down.
// Bumping "tested" without checking the reader (or the reverse) fails here.
func TestFormatsAgreeWithTable(t *testing.T) {
	tab := mustLoad(t)
	for _, tool := range tab.Tools() {
		f, ok := adapters.Formats[tool.Name]
		if !ok {
			t.Errorf("adapters.Formats has no entry for %s", tool.Name)
			continue
		}
		if len(f.Shapes) == 0 {
			t.Errorf("adapters.Formats[%q] lists no shapes", tool.Name)
		}
		tested := tool.Rows[len(tool.Rows)-1].Tested
		if f.Newest != tested {
			t.Errorf("%s: adapters.Formats newest shape %q, tools.toml newest row tested %q", tool.Name, f.Newest, tested)
		}
	}
	for name := range adapters.Formats {
		if _, ok := tab.Tool(name); !ok {
			t.Errorf("adapters.Formats[%q] is not an agent of tools.toml", name)
		}
	}
}
