package cmd

import (
	"testing"

	"github.com/carryover/carryover/adapters"
	"github.com/carryover/carryover/specs"
)

// TestEnvelopesAgreeWithSpecs: the hook path's envelope per agent is the one
// the newest specs/ row names, and every agent in specs has an adapter.
func TestEnvelopesAgreeWithSpecs(t *testing.T) {
	tab, err := specs.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tab.Tools() {
		c, err := tab.Resolve(tool.Name, "")
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if got := envelopes[tool.Name]; got != c.Envelope {
			t.Errorf("%s: hook path uses %q, specs row %s says %q", tool.Name, got, c.Row, c.Envelope)
		}
		if _, err := adapters.Lookup(tool.Name); err != nil {
			t.Errorf("specs lists %s but no adapter is registered", tool.Name)
		}
		for _, h := range c.Hooks() {
			if c.Injects(h.Native) && !isStartEvent(h.Native) && !isPromptEvent(h.Native) {
				t.Errorf("%s: inject event %s is not one the hook path injects on", tool.Name, h.Native)
			}
		}
	}
}
