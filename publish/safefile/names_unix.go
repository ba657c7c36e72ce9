//go:build !windows

package safefile

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Names lists the entries of d (unsorted).
func (d *Dir) Names() ([]string, error) {
	dup, err := unix.Dup(d.fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), d.path)
	defer f.Close()
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	return f.Readdirnames(-1)
}

// Remove deletes the entry name of d: a regular file, or a symlink itself
// (never what it points to). Anything else is refused.
func (d *Dir) Remove(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFLNK {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: ErrNotRegular}
	}
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: d.join(name), Err: err}
	}
	return nil
}
