//go:build !windows

package safefile

import (
	"golang.org/x/sys/unix"
)

// Append adds data to the end of the existing regular file at path in one
// write, when the file stays within max bytes; it reports whether it did.
// It never creates the file, never follows a symlink as path's last
// element and never blocks on a FIFO: anything but a regular file of at
// most max-len(data) bytes is left alone (false), and the caller rewrites
// it with WriteFile instead. An append of a short line is one write(2)
// under O_APPEND, so concurrent appenders never interleave within a line,
// and it costs no new inode and no rename (what makes WriteFile atomic
// and ~0.2 ms dearer).
func Append(path string, data []byte, max int64) (bool, error) {
	fd, err := openRetry(func() (int, error) {
		return unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return false, nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || regular(st) != nil || st.Size+int64(len(data)) > max {
		return false, nil
	}
	n, err := unix.Write(fd, data)
	if err != nil {
		return false, err
	}
	if n != len(data) {
		return false, unix.EIO
	}
	return true, nil
}
