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
	if fi, err := f.Stat(); err == nil {
		return fileIdentity(fi)
	}
	return 0, 0
}

func fileIdentity(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
