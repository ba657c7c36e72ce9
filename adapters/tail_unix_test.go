//go:build !windows

package adapters_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/carryover/carryover/adapters"
)

func TestTailRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, dir, "/dev/zero"} {
		if _, err := adapters.Tail(p, adapters.Cursor{}, time.Time{}, func([]byte, int64) {}); err != adapters.ErrNotRegular {
			t.Errorf("%s: err = %v, want ErrNotRegular", p, err)
		}
	}
}
