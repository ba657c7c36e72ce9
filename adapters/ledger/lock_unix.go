//go:build !windows

package ledger

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive advisory lock on dir (the carryover home) for
// the duration of a recovery, so concurrent hooks that all find the ledger
// damaged move it aside once, not each other's new ledger.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
