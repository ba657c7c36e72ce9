package adapters

import (
	"os"
	"syscall"
)

// FileID is an open file's identity: the volume serial number and the
// NTFS file index, Windows' device and inode.
func FileID(f *os.File) (dev, ino uint64) {
	var d syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &d); err != nil {
		return 0, 0
	}
	return uint64(d.VolumeSerialNumber), uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow)
}

// fileIdentity: Windows' FileInfo carries no file index; size and mtime
// alone decide there.
func fileIdentity(fi os.FileInfo) (dev, ino uint64) { return 0, 0 }
