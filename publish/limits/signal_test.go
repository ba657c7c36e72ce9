package limits

import (
	"strconv"
	"testing"
	"time"

	"github.com/carryover/carryover/distill"
)

func TestRunSignal(t *testing.T) {
	home := t.TempDir()
	now := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	const id, pid = "0123456789abcdef", 4242
	run := id + ".2"
	hook := func(session string, start bool, lvl distill.ContextLevel) {
		t.Helper()
		if _, err := RunHook(home, run, strconv.Itoa(pid), "claude", session, start, lvl, 88, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, _ := ReadSignal(home, id, 2, pid, "claude"); ok {
		t.Fatal("a signal before any hook")
	}
	hook("s-a", true, distill.ContextOK)
	hook("s-b", true, distill.ContextOK) // a later start does not re-register
	hook("s-a", false, distill.ContextWarn)
	if _, ok, _ := ReadSignal(home, id, 2, pid, "claude"); ok {
		t.Fatal("WARN signalled")
	}
	hook("s-a", false, distill.ContextCritical)
	if sig, ok, why := ReadSignal(home, id, 2, pid, "claude"); !ok || sig.Session != "s-a" || sig.Percent != 88 {
		t.Fatalf("ReadSignal = %+v %v %q", sig, ok, why)
	}
	for _, tt := range []struct {
		gen, pid int
		tool     string
	}{{2, pid + 1, "claude"}, {2, pid, "codex"}, {3, pid, "claude"}} {
		if _, ok, _ := ReadSignal(home, id, tt.gen, tt.pid, tt.tool); ok {
			t.Errorf("ReadSignal(gen %d, pid %d, %s) verified", tt.gen, tt.pid, tt.tool)
		}
	}
	// Another session's signal in the same generation.
	ClearSignal(home, id, 2)
	hook("s-b", false, distill.ContextCritical)
	if _, ok, why := ReadSignal(home, id, 2, pid, "claude"); ok || why == "" {
		t.Errorf("another session's signal: ok %v why %q", ok, why)
	}
	for _, bad := range []string{"../../etc.1", "0123456789abcdef", "XYZ0123456789abc.1", "0123456789abcdef.-1"} {
		if _, err := RunHook(home, bad, "1", "claude", "s", true, distill.ContextCritical, 90, now); err == nil {
			t.Errorf("RunHook(%q) accepted", bad)
		}
	}
}
