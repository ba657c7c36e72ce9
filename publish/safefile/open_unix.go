//go:build !windows

package safefile

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Open opens name in d for reading at random (ReadAt), with ReadFile's
// guarantees: never through a symlink, regular files only, never
// blocking on a FIFO swapped in. The caller bounds what it reads by the
// size it stats.
func (d *Dir) Open(name string) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	if err := regular(st); err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	fd, err := openRetry(func() (int, error) {
		return unix.Openat(d.fd, name, readFlags|unix.O_NOFOLLOW, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: d.why(name, err)}
	}
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil || regular(now) != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: errors.New("was replaced while being opened")}
	}
	return os.NewFile(uintptr(fd), d.join(name)), nil
}
