//go:build !linux && !windows

package safefile

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Recycled writes need Linux's RENAME_EXCHANGE and write leases
// (recycle_linux.go); elsewhere every write is a new temp file.

func (d *Dir) writeRecycled(name string, data []byte, mode os.FileMode) (bool, error) {
	return false, nil
}

func (d *Dir) swapIn(tmp, name string) error {
	if err := unix.Renameat(d.fd, tmp, d.fd, name); err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return &fs.PathError{Op: "rename", Path: d.join(name), Err: err}
	}
	return nil
}
