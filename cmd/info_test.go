package cmd

import (
	"strings"
	"testing"

	"github.com/carryover/carryover/specs"
	"github.com/carryover/carryover/specs/hookconf"
)

// TestInfoShowsPerEventHookPath: a per-event hook layout (Cline's
// hooks/<event>) is printed with <event>, never the template slot.
func TestInfoShowsPerEventHookPath(t *testing.T) {
	tab, err := specs.Load()
	if err != nil {
		t.Fatal(err)
	}
	perEvent := 0
	for _, tl := range tab.Tools() {
		p := tl.ConfigPath("linux", func(string) string { return "" }, "/home/u", func(string) bool { return false })
		if !strings.Contains(p, specs.EventSlot) {
			continue
		}
		perEvent++
		if got := (hookconf.Target{Path: p}).Where(); strings.Contains(got, "{{") || !strings.HasSuffix(got, "/<event>") {
			t.Errorf("%s: hook path shown as %q", tl.Name, got)
		}
	}
	if perEvent == 0 {
		t.Fatal("no per-event hook layout in the specs (Cline's hooks/{{event}} had one): the test checks nothing")
	}
}
