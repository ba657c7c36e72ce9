//go:build !windows

package adapters

import (
	"os"
	"syscall"
)

// FileID is an open file's identity (device, inode): a transcript replaced
// by another file under the same name has another one. Zeros when the
// platform does not say.
func FileID(f *os.File) (dev, ino uint64) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
