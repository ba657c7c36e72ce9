//go:build !linux && !windows

package safefile

import "os"

// Recycled writes need Linux's RENAME_EXCHANGE and write leases
// (recycle_linux.go); elsewhere every write is a new temp file.

func (d *Dir) writeRecycled(name string, data []byte, mode os.FileMode) (bool, error) {
	return false, nil
}

func (d *Dir) swapIn(tmp, name string) error { return d.rename(tmp, name) }
